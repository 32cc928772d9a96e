package config

import (
	"fmt"
	"strings"
)

// Roles a worker process can serve.
const (
	RoleWorkflow = "workflow"
	RoleFetch    = "fetch"
	RoleProcess  = "process"
	RoleRender   = "render"
)

func roles(dst *[]string, v string) error {
	var out []string
	seen := map[string]bool{}
	for _, r := range strings.Split(v, ",") {
		r = strings.TrimSpace(r)
		switch r {
		case RoleWorkflow, RoleFetch, RoleProcess, RoleRender:
		case "":
			continue
		default:
			return fmt.Errorf("unknown role %q (want workflow, fetch, process or render)", r)
		}
		if !seen[r] {
			seen[r] = true
			out = append(out, r)
		}
	}
	if len(out) == 0 {
		return fmt.Errorf("want at least one role")
	}
	*dst = out
	return nil
}
