package config

import (
	"os"
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
