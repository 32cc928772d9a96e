package activities

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// stages are the packages that each run one stage of a page's way (fetch, process, render,
// archive, a crawl's start and end, operators' controls); the activities here assemble them.
// They share owners (pacing, store, policy, admit, …), never one another: what one stage
// needs of another's decision is an owner's to say.
var stages = []string{"fetching", "processing", "rendering", "archiving", "frontier", "control"}

// importsOf lists, per non-test file of internal/<pkg>, the packages it imports.
func importsOf(t *testing.T, pkg string) map[string][]string {
	t.Helper()
	dir := filepath.Join("..", "internal", pkg)
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
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
			out[e.Name()] = append(out[e.Name()], path)
		}
	}
	return out
}

func TestNoStageImportsAnother(t *testing.T) {
	for _, stage := range stages {
		for file, imports := range importsOf(t, stage) {
			for _, path := range imports {
				for _, other := range stages {
					if other != stage && path == "github.com/trawlerdev/trawler/internal/"+other {
						t.Errorf("internal/%s/%s imports the %s stage", stage, file, other)
					}
				}
			}
		}
	}
}

// The store records decisions; it makes none: the near-duplicate verdict is processing's,
// admission's budget admit's, a crawl's rules policy's. It imports none of their packages.
func TestTheStoreImportsNoDecision(t *testing.T) {
	for file, imports := range importsOf(t, "store") {
		for _, path := range imports {
			for _, decider := range []string{"dedup", "admit", "policy", "processing", "fetching"} {
				if path == "github.com/trawlerdev/trawler/internal/"+decider {
					t.Errorf("internal/store/%s imports internal/%s", file, decider)
				}
			}
		}
	}
}

// maxMethods bounds a type's exported methods: a type with more holds more than one
// decision (the store had 103 before it was cut by aggregate).
const maxMethods = 30

func TestNoTypeHasMoreThanThirtyExportedMethods(t *testing.T) {
	methods := map[string]int{} // "dir.Type"
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && strings.HasPrefix(d.Name(), ".") && path != ".." || d.IsDir() && d.Name() == "node_modules" {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Recv == nil || !fn.Name.IsExported() {
				continue
			}
			typ := fn.Recv.List[0].Type
			if star, ok := typ.(*ast.StarExpr); ok {
				typ = star.X
			}
			if id, ok := typ.(*ast.Ident); ok {
				methods[filepath.Dir(path)+"."+id.Name]++
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if methods["../internal/store.Store"] == 0 {
		t.Fatal("no methods of store.Store counted: the walk missed the code")
	}
	for typ, n := range methods {
		if n > maxMethods {
			t.Errorf("%s has %d exported methods (at most %d)", strings.TrimPrefix(typ, "../"), n, maxMethods)
		}
	}
}
