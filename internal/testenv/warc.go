package testenv

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// WARCRecord is one record as webrecorder's warcio.js (an independent reader) reads it.
type WARCRecord struct {
	File          string `json:"file"`
	Offset        int64  `json:"offset"`
	Length        int64  `json:"length"`
	Type          string `json:"type"`
	ID            string `json:"id"`
	URI           string `json:"uri"`
	Date          string `json:"date"`
	Status        int    `json:"status"`
	ContentType   string `json:"contentType"`
	Profile       string `json:"profile"`
	RefersTo      string `json:"refersTo"`
	RefersToID    string `json:"refersToID"` // WARC-Refers-To: the record a conversion was made from
	PayloadDigest string `json:"payloadDigest"`
	PayloadBytes  int    `json:"payloadBytes"`
	DigestOK      *bool  `json:"digestOK"`
}

// ReadWARC parses WARC files with warcio.js (scripts/warc_check.mjs; `make up` installs it)
// and fails t if the reader rejects any of them.
func ReadWARC(t testing.TB, files ...string) []WARCRecord {
	t.Helper()
	root := repoRoot(t)
	if _, err := os.Stat(filepath.Join(root, ".tools", "node", "node_modules", "warcio", "package.json")); err != nil {
		t.Fatalf("testenv: warcio.js is not installed: run scripts/tools.sh (%s)", hint)
	}
	cmd := exec.Command("node", append([]string{filepath.Join(root, "scripts", "warc_check.mjs")}, files...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("testenv: warcio.js could not read %v: %v\n%s", files, err, stderr.String())
	}
	var recs []WARCRecord
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var r WARCRecord
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("testenv: warc_check output %q: %v", sc.Text(), err)
		}
		recs = append(recs, r)
	}
	return recs
}

// repoRoot is the directory holding go.mod, above the test's working directory.
func repoRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("testenv: no go.mod above the working directory")
		}
		dir = parent
	}
}
