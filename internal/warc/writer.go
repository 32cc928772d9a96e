package warc

import (
	"bufio"
	"fmt"
	"os"
	"time"
)

// Writer appends gzip-per-record WARC records to a local file and says where each landed.
type Writer struct {
	Path    string
	f       *os.File
	buf     *bufio.Writer
	size    int64
	records int
}

// Create opens a new WARC file in dir, starting with a warcinfo record naming the software
// and the file.
func Create(dir, filename, software string, now time.Time) (*Writer, error) {
	f, err := os.CreateTemp(dir, "trawler-*.warc.gz")
	if err != nil {
		return nil, fmt.Errorf("warc: create: %w", err)
	}
	w := &Writer{Path: f.Name(), f: f, buf: bufio.NewWriterSize(f, 1<<20)}
	if _, _, err := w.Add(Info(filename, software, now)); err != nil {
		w.Discard()
		return nil, err
	}
	return w, nil
}

// Info is the warcinfo record that opens a file: the software and the file's name.
func Info(filename, software string, now time.Time) Record {
	info := fmt.Sprintf("software: %s\r\nformat: WARC File Format 1.1\r\nconformsTo: http://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/\r\n", software)
	return Record{Type: TypeWarcinfo, ID: RecordID("warcinfo/" + filename), Date: now,
		ContentType: "application/warc-fields", Extra: [][2]string{{"WARC-Filename", filename}}, Block: []byte(info)}
}

// Add writes a record and returns its offset and compressed length in the file.
func (w *Writer) Add(r Record) (offset, length int64, err error) {
	offset = w.size
	length, err = r.Marshal(w.buf)
	w.size += length
	w.records++
	return offset, length, err
}

// AddRaw appends records already marshalled (whole gzip members, records of them) and
// returns the offset they start at; records is how many they are.
func (w *Writer) AddRaw(b []byte, records int) (offset int64, err error) {
	offset = w.size
	n, err := w.buf.Write(b)
	w.size += int64(n)
	w.records += records
	return offset, err
}

// Size is the file's length so far.
func (w *Writer) Size() int64 { return w.size }

// Records is the number of records written, warcinfo included.
func (w *Writer) Records() int { return w.records }

// Close flushes the file; it stays on disk for the caller to upload and remove.
func (w *Writer) Close() error {
	if err := w.buf.Flush(); err != nil {
		_ = w.f.Close()
		return fmt.Errorf("warc: flush %s: %w", w.Path, err)
	}
	if err := w.f.Close(); err != nil {
		return fmt.Errorf("warc: close %s: %w", w.Path, err)
	}
	return nil
}

// Discard closes and removes the file.
func (w *Writer) Discard() {
	_ = w.f.Close()
	_ = os.Remove(w.Path)
}
