package pacing

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// A host's next start has one writer: the store's schedule surface (internal/store's
// schedule_*.go, HostSchedule), which only Schedule calls. Any other statement that sets
// hosts.next_request_at — in Go or in a migration's function — is a second owner.
func TestOnlyTheScheduleSurfaceWritesAHostsNextStart(t *testing.T) {
	write := regexp.MustCompile(`(?i)(SET\s+next_request_at|next_request_at\s*=\s*[^=]|\(host,\s*next_request_at\))`)
	root := "../.."
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") && path != root || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() || strings.HasSuffix(path, "_test.go") || !(strings.HasSuffix(path, ".go") || strings.HasSuffix(path, ".sql")) {
			return nil
		}
		raw, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		owner := strings.HasPrefix(filepath.ToSlash(rel), "internal/store/schedule_")
		for i, line := range strings.Split(string(raw), "\n") {
			if write.MatchString(line) && !owner && !strings.HasPrefix(strings.TrimSpace(line), "//") {
				t.Errorf("%s:%d writes hosts.next_request_at outside the schedule surface: %s", rel, i+1, strings.TrimSpace(line))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
