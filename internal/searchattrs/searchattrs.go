// Package searchattrs owns the Temporal search attributes Trawler's workflows set (Host,
// CrawlID, HostState): registering them on a namespace (trawler setup) and checking them
// when a worker starts. On a namespace that lacks one, every workflow that sets it fails its
// tasks and the crawl stalls with nothing in Trawler's own logs.
package searchattrs

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"

	"github.com/trawlerdev/trawler/internal/crawl"
)

// CannotList says err is the cluster refusing this client the list (no permission, or an API
// it does not serve, as a cloud service may): what is registered cannot be told from here.
func CannotList(err error) bool {
	var denied *serviceerror.PermissionDenied
	var unimplemented *serviceerror.Unimplemented
	return errors.As(err, &denied) || errors.As(err, &unimplemented)
}

// registered lists namespace's custom search attributes with their types.
func registered(ctx context.Context, c client.Client, namespace string) (map[string]enums.IndexedValueType, error) {
	resp, err := c.OperatorService().ListSearchAttributes(ctx, &operatorservice.ListSearchAttributesRequest{Namespace: namespace})
	if err != nil {
		return nil, fmt.Errorf("list the search attributes of namespace %s: %w", namespace, err)
	}
	return resp.GetCustomAttributes(), nil
}

// missing names the keys namespace lacks, or has with another type.
func missing(ctx context.Context, c client.Client, namespace string) ([]string, error) {
	have, err := registered(ctx, c, namespace)
	if err != nil {
		return nil, err
	}
	var lacking []string
	for _, k := range crawl.SearchAttributes() {
		if t, ok := have[k.GetName()]; !ok || t != k.GetValueType() {
			lacking = append(lacking, k.GetName())
		}
	}
	return lacking, nil
}

// Register adds the keys namespace lacks and returns their names; registering again adds
// nothing. A key present with another type is an error: it cannot be changed in place.
func Register(ctx context.Context, c client.Client, namespace string) ([]string, error) {
	have, err := registered(ctx, c, namespace)
	if err != nil {
		return nil, err
	}
	add := map[string]enums.IndexedValueType{}
	for _, k := range crawl.SearchAttributes() {
		t, ok := have[k.GetName()]
		switch {
		case !ok:
			add[k.GetName()] = k.GetValueType()
		case t != k.GetValueType():
			return nil, fmt.Errorf("namespace %s has search attribute %s as %s; Trawler needs %s (remove it first)",
				namespace, k.GetName(), t, k.GetValueType())
		}
	}
	if len(add) == 0 {
		return nil, nil
	}
	if _, err := c.OperatorService().AddSearchAttributes(ctx, &operatorservice.AddSearchAttributesRequest{
		Namespace: namespace, SearchAttributes: add}); err != nil {
		return nil, fmt.Errorf("add search attributes to namespace %s: %w", namespace, err)
	}
	names := make([]string, 0, len(add))
	for n := range add {
		names = append(names, n)
	}
	slices.Sort(names)
	return names, nil
}

// Check fails, saying what to run, when namespace lacks any of the keys.
func Check(ctx context.Context, c client.Client, namespace string) error {
	lacking, err := missing(ctx, c, namespace)
	if err != nil {
		return err
	}
	if len(lacking) > 0 {
		return fmt.Errorf("namespace %s lacks the search attributes %s that Trawler's workflows set (its crawls would stall): run `trawler setup` once against this cluster to register them",
			namespace, strings.Join(lacking, ", "))
	}
	return nil
}
