package activities

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// stages are the packages that each run one stage of a page's way (fetch, process, render,
// archive); the activities here assemble them. They share owners (pacing, store, admit, …),
// never one another: what one stage needs of another's decision is an owner's to say.
var stages = []string{"fetching", "processing", "rendering", "archiving"}

func TestNoStageImportsAnother(t *testing.T) {
	for _, stage := range stages {
		dir := filepath.Join("..", "internal", stage)
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
				continue
			}
			f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(dir, e.Name()), nil, parser.ImportsOnly)
			if err != nil {
				t.Fatal(err)
			}
			for _, imp := range f.Imports {
				path, _ := strconv.Unquote(imp.Path.Value)
				for _, other := range stages {
					if other != stage && path == "github.com/trawlerdev/trawler/internal/"+other {
						t.Errorf("internal/%s/%s imports the %s stage", stage, e.Name(), other)
					}
				}
			}
		}
	}
}
