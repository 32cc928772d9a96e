package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"

	"github.com/trawlerdev/trawler/internal/crawl"
)

// readRules reads a file of extraction rules: a JSON list of rules, or an object holding them
// under "extract" (a spec's). A field the rules do not know is refused, as the spec's are.
func readRules(path string) ([]crawl.ExtractRule, error) {
	return readList[crawl.ExtractRule](path, "extract", "rules")
}

// readOutputs reads a file of outputs (spec.outputs): a JSON list of outputs, or an object
// holding them under "outputs" (a spec's). A field they do not know is refused.
func readOutputs(path string) ([]crawl.Output, error) {
	return readList[crawl.Output](path, "outputs", "outputs")
}

// readList reads a JSON list of what (at least one), or an object holding it under key.
func readList[T any](path, key, what string) ([]T, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	raw = bytes.TrimSpace(raw)
	if len(raw) > 0 && raw[0] == '{' {
		var wrapped map[string]json.RawMessage
		if err := json.Unmarshal(raw, &wrapped); err != nil || wrapped[key] == nil {
			return nil, fmt.Errorf("%s: want a list of %s, or an object with the list under %q", path, what, key)
		}
		raw = wrapped[key]
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	var list []T
	if err := dec.Decode(&list); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("%s: something follows the list of %s", path, what)
	}
	if len(list) == 0 {
		return nil, fmt.Errorf("%s: no %s", path, what)
	}
	return list, nil
}
