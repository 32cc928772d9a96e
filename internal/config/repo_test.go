package config

import (
	"os"
	"path/filepath"
	"regexp"
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

// The README's walk names, at each step, a file that exists and a function defined in it, and
// stays within twenty files.
func TestReadmeWalkNamesFilesAndFunctionsThatExist(t *testing.T) {
	raw, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(raw)
	start := strings.Index(readme, "### From a seed to a stored page, file by file")
	end := strings.Index(readme[start:], "\n### ")
	if start < 0 || end < 0 {
		t.Fatal("README has no walk from a seed to a stored page")
	}
	step := regexp.MustCompile("(?m)^\\d+\\. `([^`]+\\.go)`, `([^`]+)`")
	steps := step.FindAllStringSubmatch(readme[start:start+end], -1)
	if len(steps) < 10 || len(steps) > 18 {
		t.Fatalf("the walk has %d steps; want a walk of at most 18 files (a reader opens the README and a file or two more, and the walk is to stay under 20)", len(steps))
	}
	for _, s := range steps {
		src, err := os.ReadFile("../../" + s[1])
		if err != nil {
			t.Errorf("step names %s: %v", s[1], err)
			continue
		}
		name := s[2][strings.LastIndex(s[2], ".")+1:]
		if !regexp.MustCompile(`(?m)^func (\([^)]*\) )?` + regexp.QuoteMeta(name) + `\(`).Match(src) {
			t.Errorf("step names %s in %s, which defines no such function", s[2], s[1])
		}
	}
}
