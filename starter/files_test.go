package main

import (
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// Outputs honour the umask: 0644 under 022, 0600 under 077 (they were forced to 0644).
func TestOutputsHonourTheUmask(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		mask int
		want os.FileMode
	}{{0o022, 0o644}, {0o077, 0o600}} {
		old := syscall.Umask(c.mask)
		path := filepath.Join(dir, "out")
		err := writeFile(path, func(w io.Writer) error { _, err := w.Write([]byte("x")); return err })
		syscall.Umask(old)
		if err != nil {
			t.Fatal(err)
		}
		fi, err := os.Stat(path)
		if err != nil || fi.Mode().Perm() != c.want {
			t.Errorf("umask %03o: mode %v (%v); want %v", c.mask, fi.Mode().Perm(), err, c.want)
		}
	}
}
