package main

import (
	"fmt"
	"os"
	"strings"
)

// A flag that takes a secret also takes it from a file (@FILE) or, where the value cannot be
// mistaken for one, the environment (env:NAME): a value on the command line is in every
// process listing (ps, /proc/PID/cmdline) and shell history.

// secretArg is a flag's value, read from @FILE or env:NAME when it names one.
func secretArg(flagName, v string) (string, error) {
	switch {
	case strings.HasPrefix(v, "@"):
		b, err := os.ReadFile(v[1:])
		if err != nil {
			return "", fmt.Errorf("%s: %w", flagName, err)
		}
		return strings.TrimSpace(string(b)), nil
	case strings.HasPrefix(v, "env:"):
		val := strings.TrimSpace(os.Getenv(v[len("env:"):]))
		if val == "" {
			return "", fmt.Errorf("%s: the environment variable %s is not set", flagName, v[len("env:"):])
		}
		return val, nil
	}
	return v, nil
}

// headerLines expands --header values: "Name: value" as given, @FILE into its non-empty lines
// (# starts a comment).
func headerLines(values []string) ([]string, error) {
	var out []string
	for _, v := range values {
		if !strings.HasPrefix(v, "@") {
			out = append(out, v)
			continue
		}
		b, err := os.ReadFile(v[1:])
		if err != nil {
			return nil, fmt.Errorf("--header: %w", err)
		}
		for _, line := range strings.Split(string(b), "\n") {
			if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
				out = append(out, line)
			}
		}
	}
	return out, nil
}
