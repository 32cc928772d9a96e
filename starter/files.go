package main

import (
	"bufio"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
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
	// As os.Create would leave it (0666 less the umask), not CreateTemp's 0600: an operator
	// whose umask keeps files private gets private files.
	if err := os.Chmod(tmp.Name(), 0o666&^umask()); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// umask is the process's file mode creation mask, read where Linux shows it (reading it with
// syscall.Umask would set it, for a moment, for every thread); 022 where it cannot be read.
func umask() os.FileMode {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0o022
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "Umask:"); ok {
			if m, err := strconv.ParseUint(strings.TrimSpace(v), 8, 32); err == nil {
				return os.FileMode(m)
			}
		}
	}
	return 0o022
}
