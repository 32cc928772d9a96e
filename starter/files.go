package main

import (
	"io"
	"os"
	"path/filepath"
)

// writeFile writes a file whole or not at all (a temporary file renamed into place).
func writeFile(path string, write func(io.Writer) error) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := write(tmp); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil { // as os.Create would leave it, not CreateTemp's 0600
		return err
	}
	return os.Rename(tmp.Name(), path)
}
