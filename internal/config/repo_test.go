package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The README's configuration table lists every setting with its environment name and flag.
func TestReadmeDocumentsEverySetting(t *testing.T) {
	raw, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(raw)
	for _, s := range Settings() {
		row := "| `" + s.Env + "` | `--" + s.Flag + "` |"
		if !strings.Contains(readme, row) {
			t.Errorf("README's configuration table has no row starting %q", row)
		}
	}
}

// The repository stands alone: its README and docs name no file outside it.
func TestReadmeAndDocsPointInsideTheRepo(t *testing.T) {
	docs, _ := filepath.Glob("../../docs/*.md")
	for _, path := range append([]string{"../../README.md"}, docs...) {
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(raw), "\n") {
			if strings.Contains(line, "../shared") || strings.Contains(line, "](../") {
				t.Errorf("%s:%d points outside the repository: %s", filepath.Base(path), i+1, strings.TrimSpace(line))
			}
		}
	}
}
