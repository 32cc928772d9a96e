package main

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// --seeds takes a URL or a file of URLs (one a line, blank lines and # comments skipped), as
// often as given, in order, and positional arguments are seeds too.
func TestSeedsFromFilesAndArguments(t *testing.T) {
	file := filepath.Join(t.TempDir(), "seeds.txt")
	if err := os.WriteFile(file, []byte("# news sites\nhttp://a.test/\n\n  https://b.test/x  \n# done\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := readSeeds([]string{"http://first.test/", file, "http://last.test/"})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"http://first.test/", "http://a.test/", "https://b.test/x", "http://last.test/"}; !slices.Equal(got, want) {
		t.Errorf("seeds %q, want %q", got, want)
	}
}
