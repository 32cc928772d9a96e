package archiving

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/gz"
	"github.com/trawlerdev/trawler/internal/store"
)

// fakeStore keeps a crawl's captures and renders in memory, as the archive stage sees them.
type fakeStore struct {
	caps     []store.Capture
	sizes    map[int64]int64
	renders  []store.RenderCapture
	saved    []store.WARCFile
	archived map[int64]bool
	rendered map[string][]store.RenderCapture // renders by the file they went into
	locked   bool
}

func newFakeStore() *fakeStore {
	return &fakeStore{sizes: map[int64]int64{}, archived: map[int64]bool{}, rendered: map[string][]store.RenderCapture{}}
}

func (s *fakeStore) LockArchive(context.Context, string) (func(), bool, error) {
	if s.locked {
		return nil, false, nil
	}
	s.locked = true
	return func() { s.locked = false }, true, nil
}

func (s *fakeStore) OldestUnarchived(context.Context, string) (time.Time, int64, error) {
	var oldest time.Time
	var pending int64
	for _, c := range s.caps {
		if !s.archived[c.ID] {
			if oldest.IsZero() || c.FetchedAt.Before(oldest) {
				oldest = c.FetchedAt
			}
			pending += s.sizes[c.ID]
		}
	}
	return oldest, pending, nil
}

func (s *fakeStore) Unarchived(_ context.Context, _ string, after int64, limit int) ([]store.Capture, error) {
	var out []store.Capture
	for _, c := range s.caps {
		if c.ID > after && !s.archived[c.ID] && len(out) < limit {
			out = append(out, c)
		}
	}
	return out, nil
}

func (s *fakeStore) SaveWARCFile(_ context.Context, f store.WARCFile) error {
	s.saved = append(s.saved, f)
	for _, p := range f.Placed {
		s.archived[p.ID] = true
	}
	return nil
}

func (s *fakeStore) UnarchivedRenders(_ context.Context, _ string, limit int) ([]store.RenderCapture, error) {
	var out []store.RenderCapture
	for _, r := range s.renders {
		if len(out) < limit && !slices.ContainsFunc(s.allRendered(), func(d store.RenderCapture) bool { return d.FetchID == r.FetchID }) {
			out = append(out, r)
		}
	}
	return out, nil
}

func (s *fakeStore) allRendered() []store.RenderCapture {
	var all []store.RenderCapture
	for _, rs := range s.rendered {
		all = append(all, rs...)
	}
	return all
}

func (s *fakeStore) RendersArchived(_ context.Context, file string, rs []store.RenderCapture) error {
	s.rendered[file] = append(s.rendered[file], rs...)
	return nil
}

// fakeBlobs keeps uploaded objects in memory.
type fakeBlobs map[string][]byte

func (b fakeBlobs) PutFile(_ context.Context, key, path, _ string) error {
	data, err := os.ReadFile(path)
	b[key] = data
	return err
}

func (b fakeBlobs) Put(_ context.Context, key string, data []byte, _ string) error {
	b[key] = append([]byte(nil), data...)
	return nil
}

var t0 = time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)

// capture adds a capture with a body (or a revisit of an earlier one when refersTo > 0).
func (s *fakeStore) capture(id int64, url string, status int, refersTo int64) {
	c := store.Capture{ID: id, FetchKey: "k" + url, URL: url, FetchedAt: t0.Add(time.Duration(id) * time.Second), Status: status,
		ContentType: "text/html; charset=utf-8", RequestHead: "GET / HTTP/1.1\r\nHost: a.test\r\n\r\n",
		ResponseHead: "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n"}
	if refersTo > 0 {
		c.RefersToID, c.RefersToURL, c.RefersToDate, c.RefersToHash = refersTo, "http://a.test/", t0, []byte{1, 2, 3}
	}
	if status == 200 {
		c.BodyKey, c.ContentHash = "body/"+url, []byte{9, 9}
	}
	s.caps = append(s.caps, c)
	s.sizes[id] = 1000
}

func newWriter(s *fakeStore, b fakeBlobs) *Writer {
	return &Writer{Store: s, Blobs: b, Software: "test", TempDir: "",
		Body: func(_ context.Context, key string) ([]byte, error) { return []byte("<html>" + key + "</html>"), nil },
		Now:  func() time.Time { return t0.Add(time.Hour) }}
}

// warcTypes lists the WARC-Type of every record of a stored .warc.gz.
func warcTypes(t *testing.T, data []byte) []string {
	t.Helper()
	raw := gunzipAll(t, data)
	var out []string
	for _, m := range regexp.MustCompile(`(?m)^WARC-Type: (\S+)\r$`).FindAllStringSubmatch(string(raw), -1) {
		out = append(out, m[1])
	}
	return out
}

// A final write puts every capture into one file, its request and response (or revisit)
// records in fetch order, with a sorted CDXJ index of one line a capture, and records where
// each went; hooks hear of the reads and the file.
func TestFinalWriteArchivesEveryCapture(t *testing.T) {
	s, b := newFakeStore(), fakeBlobs{}
	s.capture(1, "http://a.test/", 200, 0)
	s.capture(2, "http://a.test/b", 200, 0)
	s.capture(3, "http://a.test/", 304, 1)
	w := newWriter(s, b)
	var progress []int64
	var wrote []string
	w.Hooks = Hooks{Progress: func(after int64) { progress = append(progress, after) },
		Wrote: func(file string, records int, _ int64) { wrote = append(wrote, file) }}
	res, err := w.Write(context.Background(), Job{CrawlID: "c", Final: true, MaxBytes: 1 << 30, MaxAge: time.Hour})
	if err != nil || res.Files != 1 || len(s.saved) != 1 {
		t.Fatalf("result %+v, saved %d files, err %v", res, len(s.saved), err)
	}
	f := s.saved[0]
	if !strings.HasPrefix(f.Name, "warc/c/c-") || !strings.HasSuffix(f.Name, "000000000001.warc.gz") || f.FirstID != 1 || f.LastID != 3 {
		t.Errorf("file %s (first %d, last %d): want it named for the crawl and its first capture", f.Name, f.FirstID, f.LastID)
	}
	want := []string{"warcinfo", "request", "response", "request", "response", "request", "revisit"}
	if got := warcTypes(t, b[f.Name]); !slices.Equal(got, want) || res.Records != len(want) {
		t.Errorf("records %v (counted %d), want %v", got, res.Records, want)
	}
	if len(f.Placed) != 3 || f.Placed[0].Offset >= f.Placed[1].Offset || f.Placed[1].Offset >= f.Placed[2].Offset {
		t.Errorf("placed %+v: want three captures in increasing offsets", f.Placed)
	}
	lines := strings.Split(strings.TrimSpace(string(b[f.CDXKey])), "\n")
	if len(lines) != 3 || !slices.IsSorted(lines) {
		t.Errorf("CDXJ %q: want three sorted lines", lines)
	}
	if !slices.Equal(progress, []int64{3}) || !slices.Equal(wrote, []string{f.Name}) {
		t.Errorf("hooks heard progress %v and files %v", progress, wrote)
	}
	if again, err := w.Write(context.Background(), Job{CrawlID: "c", Final: true, MaxBytes: 1 << 30}); err != nil || again.Files != 0 {
		t.Errorf("a second write wrote %+v (%v): every capture was archived", again, err)
	}
}

// Unless final, captures wait until a file would be full or the oldest has waited MaxAge; a
// file that fills up is closed and the next begins.
func TestFilesWaitUntilFullOrOldAndSplitWhenFull(t *testing.T) {
	s, b := newFakeStore(), fakeBlobs{}
	for i := int64(1); i <= 6; i++ {
		s.capture(i, "http://a.test/"+string(rune('a'+i)), 200, 0)
	}
	w := newWriter(s, b)
	job := Job{CrawlID: "c", MaxBytes: 1 << 30, MaxAge: 2 * time.Hour} // 6,000 bytes pending, an hour old
	if res, err := w.Write(context.Background(), job); err != nil || res.Files != 0 {
		t.Fatalf("not full, not old: wrote %+v %v", res, err)
	}
	job.MaxAge = 30 * time.Minute
	job.MaxBytes = 1 // every capture fills a file
	res, err := w.Write(context.Background(), job)
	if err != nil || res.Files != 6 || len(s.saved) != 6 {
		t.Fatalf("old and full: %+v %v, %d files", res, err, len(s.saved))
	}
	for i, f := range s.saved {
		if len(f.Placed) != 1 || f.Placed[0].ID != int64(i+1) {
			t.Errorf("file %d placed %+v: want capture %d alone, in fetch order", i, f.Placed, i+1)
		}
	}
}

// Rendered DOMs go first, into files of their own (…-dom-…) with an empty index, as
// conversion records referring to their captures' responses.
func TestRendersGoFirstIntoFilesOfTheirOwn(t *testing.T) {
	s, b := newFakeStore(), fakeBlobs{}
	s.capture(1, "http://a.test/", 200, 0)
	s.renders = []store.RenderCapture{{CrawlID: "c", FetchID: 1, FetchKey: "khttp://a.test/", URL: "http://a.test/", RenderedAt: t0, DOMKey: "dom/1"}}
	res, err := newWriter(s, b).Write(context.Background(), Job{CrawlID: "c", Final: true, MaxBytes: 1 << 30})
	if err != nil || res.Files != 2 || len(s.saved) != 2 {
		t.Fatalf("%+v %v", res, err)
	}
	dom := s.saved[0]
	if !strings.Contains(dom.Name, "-dom-") || len(s.rendered[dom.Name]) != 1 || len(dom.Placed) != 0 {
		t.Errorf("first file %+v, renders recorded %v: want the DOM file, its render recorded, no capture placed", dom, s.rendered)
	}
	if got := warcTypes(t, b[dom.Name]); !slices.Equal(got, []string{"warcinfo", "conversion"}) {
		t.Errorf("DOM file records %v", got)
	}
	if strings.TrimSpace(string(b[dom.CDXKey])) != "" {
		t.Errorf("DOM file index %q: want empty", b[dom.CDXKey])
	}
	if len(s.saved[1].Placed) != 1 || s.saved[1].Placed[0].ID != 1 {
		t.Errorf("second file %+v: want the capture", s.saved[1])
	}
}

// With Payload set, a response's body and a rendered DOM are spliced into their records as
// their segments compressed them: each stored stream is in the file as it is, and every file
// reads back exactly as the files a writer with Body alone writes.
func TestStoredStreamsAreSplicedIntoTheirRecords(t *testing.T) {
	page := func(key string) []byte { return bytes.Repeat([]byte("<p>"+key+"</p>\n"), 200) }
	streams := map[string][]byte{}
	files := map[bool]fakeBlobs{}
	for _, splice := range []bool{true, false} {
		s, b := newFakeStore(), fakeBlobs{}
		s.capture(1, "http://a.test/", 200, 0)
		s.capture(2, "http://a.test/b", 200, 0)
		s.renders = []store.RenderCapture{{CrawlID: "c", FetchID: 1, FetchKey: "khttp://a.test/", URL: "http://a.test/", RenderedAt: t0, DOMKey: "dom/1"}}
		w := newWriter(s, b)
		w.Body = func(_ context.Context, key string) ([]byte, error) { return page(key), nil }
		if splice {
			w.Payload = func(_ context.Context, key string) ([]byte, *gz.Deflated, error) {
				m, err := gz.CompressSpliceable(page(key))
				if err != nil {
					return nil, nil, err
				}
				d, _ := gz.SpliceableOf(m)
				streams[key] = d.Stream
				return page(key), &d, nil
			}
		}
		if res, err := w.Write(context.Background(), Job{CrawlID: "c", Final: true, MaxBytes: 1 << 30}); err != nil || res.Files != 2 {
			t.Fatalf("splice %v: %+v %v", splice, res, err)
		}
		files[splice] = b
	}
	if len(streams) != 3 {
		t.Fatalf("%d stored streams read, want 3 (two bodies, one DOM)", len(streams))
	}
	var all []byte
	for name, data := range files[true] {
		if !strings.HasSuffix(name, ".warc.gz") {
			continue
		}
		all = append(all, data...)
		if got, want := gunzipAll(t, data), gunzipAll(t, files[false][name]); !bytes.Equal(got, want) {
			t.Errorf("%s reads back differently spliced", name)
		}
	}
	for key, stream := range streams {
		if !bytes.Contains(all, stream) {
			t.Errorf("the stored stream of %s is not in its file", key)
		}
	}
}

func gunzipAll(t *testing.T, data []byte) []byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// Another writer holding the crawl leaves it alone; a body that cannot be read fails the
// write with nothing recorded and no file left behind.
func TestBusyCrawlAndUnreadableBody(t *testing.T) {
	s, b := newFakeStore(), fakeBlobs{}
	s.capture(1, "http://a.test/", 200, 0)
	s.locked = true
	if res, err := newWriter(s, b).Write(context.Background(), Job{CrawlID: "c", Final: true}); err != nil || !res.Busy || res.Files != 0 {
		t.Fatalf("a held crawl: %+v %v", res, err)
	}
	s.locked = false
	dir := t.TempDir()
	w := newWriter(s, b)
	w.TempDir = dir
	w.Body = func(context.Context, string) ([]byte, error) { return nil, errors.New("segment gone") }
	if _, err := w.Write(context.Background(), Job{CrawlID: "c", Final: true, MaxBytes: 1 << 30}); err == nil || len(s.saved) != 0 || len(b) != 0 {
		t.Fatalf("unreadable body: err %v, %d files saved, %d objects", err, len(s.saved), len(b))
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("left %d temporary files behind", len(left))
	}
}

// A crawl's job follows its spec: its file size and age as set (defaults applied), and no job
// at all when the spec turns WARC off.
func TestJobFollowsTheSpec(t *testing.T) {
	spec := crawl.Spec{Name: "c", Seeds: []string{"http://a.test/"}}.WithDefaults()
	job, ok := JobFor("c", true, spec)
	if !ok || job.CrawlID != "c" || !job.Final || job.MaxBytes != spec.WARC.MaxBytes || job.MaxBytes <= 0 || job.MaxAge != spec.WARC.MaxAge.D() {
		t.Errorf("job %+v (%v); want crawl c, final, the spec's size %d and age %s", job, ok, spec.WARC.MaxBytes, spec.WARC.MaxAge.D())
	}
	spec.WARC.Off = true
	if _, ok := JobFor("c", true, spec); ok {
		t.Error("a job for a crawl whose spec turns WARC off")
	}
}
