package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/trawlerdev/trawler/internal/config"
)

// runConfig prints every setting as the README's Markdown table.
func runConfig(_ context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("trawler config", flag.ContinueOnError)
	if err := fs.Parse(args); err != nil {
		return err
	}
	fmt.Fprintln(stdout, "| environment | flag | default | meaning |")
	fmt.Fprintln(stdout, "|---|---|---|---|")
	for _, s := range config.Settings() {
		def := s.Default
		if def == "" {
			def = "(none)"
		}
		fmt.Fprintf(stdout, "| `%s` | `--%s` | `%s` | %s |\n", s.Env, s.Flag, def, strings.ReplaceAll(s.Usage, "|", `\|`))
	}
	return nil
}
