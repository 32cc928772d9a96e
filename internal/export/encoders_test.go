package export

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"
)

var sample = []Record{
	{URL: "http://a.test/", FinalURL: "http://a.test/", Status: 200, FetchedAt: time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC),
		ContentType: "text/html", Title: "A, \"quoted\"\nline", Lang: "en", Text: "main text", Links: []string{"http://a.test/x", "http://b.test/"},
		Digest: "sha256:ABC", WARCFile: "warc/c/f.warc.gz", WARCOffset: 1234, WARCLength: 99},
	{URL: "http://a.test/x", Status: 200, FetchedAt: time.Date(2026, 11, 24, 10, 0, 1, 0, time.UTC), DuplicateOf: "http://a.test/"},
}

func encodeAll(t *testing.T, format string, fields []string) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc, err := newEncoder(format, &buf, fields, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	for i := range sample {
		if err := enc.encode(&sample[i], nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := enc.close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// Each format reads back, by an ordinary reader of it, as the records written: every field,
// or the chosen ones only.
func TestEachFormatReadsBack(t *testing.T) {
	t.Run("jsonl", func(t *testing.T) {
		lines := bytes.Split(bytes.TrimSpace(encodeAll(t, "jsonl", Fields)), []byte("\n"))
		if len(lines) != 2 {
			t.Fatalf("%d lines", len(lines))
		}
		for i, l := range lines {
			var r Record
			if err := json.Unmarshal(l, &r); err != nil {
				t.Fatal(err)
			}
			want := sample[i]
			if want.Links == nil {
				want.Links = []string{}
			}
			if !equal(r, want) {
				t.Errorf("line %d reads %+v; want %+v", i, r, want)
			}
		}
		var m map[string]any
		_ = json.Unmarshal(bytes.Split(encodeAll(t, "jsonl", []string{"url", "status"}), []byte("\n"))[0], &m)
		if len(m) != 2 || m["url"] != "http://a.test/" || m["status"] != 200.0 {
			t.Errorf("with two fields: %v", m)
		}
	})
	t.Run("csv", func(t *testing.T) {
		rows, err := csv.NewReader(bytes.NewReader(encodeAll(t, "csv", []string{"url", "title", "links", "fetchedAt"}))).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) != 3 || !slices.Equal(rows[0], []string{"url", "title", "links", "fetchedAt"}) ||
			rows[1][1] != sample[0].Title || rows[1][2] != "http://a.test/x http://b.test/" || rows[2][3] != "2026-11-24T10:00:01Z" {
			t.Errorf("csv reads %q", rows)
		}
	})
	t.Run("parquet", func(t *testing.T) {
		data := encodeAll(t, "parquet", Fields)
		got, err := parquet.Read[Record](bytes.NewReader(data), int64(len(data)))
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 2 || !equal(got[0], sample[0]) || got[1].DuplicateOf != "http://a.test/" {
			t.Errorf("parquet reads %+v", got)
		}
		type two struct {
			URL    string `parquet:"url"`
			Status int32  `parquet:"status"`
		}
		data = encodeAll(t, "parquet", []string{"url", "status"})
		f, err := parquet.OpenFile(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			t.Fatal(err)
		}
		if cols := f.Schema().Columns(); len(cols) != 2 {
			t.Errorf("with two fields the file has columns %v", cols)
		}
		got2, err := parquet.Read[two](bytes.NewReader(data), int64(len(data)))
		if err != nil || len(got2) != 2 || got2[1].URL != "http://a.test/x" || got2[1].Status != 200 {
			t.Errorf("two fields read %+v, %v", got2, err)
		}
	})
}

func equal(a, b Record) bool {
	return a.URL == b.URL && a.FinalURL == b.FinalURL && a.Status == b.Status && a.FetchedAt.Equal(b.FetchedAt) &&
		a.ContentType == b.ContentType && a.Title == b.Title && a.Lang == b.Lang && a.Text == b.Text && slices.Equal(a.Links, b.Links) &&
		a.Digest == b.Digest && a.DuplicateOf == b.DuplicateOf && a.WARCFile == b.WARCFile && a.WARCOffset == b.WARCOffset && a.WARCLength == b.WARCLength
}

func TestBadOptionsAreRefused(t *testing.T) {
	for _, o := range []Options{{Format: "jsonl"}, {Crawl: "c", Format: "xml"}, {Crawl: "c", Format: "csv", Fields: []string{"url", "body"}},
		{Crawl: "c", Format: "parquet", Fields: []string{"url", "url"}}} {
		if err := o.Check(); err == nil {
			t.Errorf("%+v was taken", o)
		}
	}
}

// --csv-safe defuses cells a spreadsheet would run (=HYPERLINK(…) as a page's title); without
// it the cell is the page's own.
func TestCSVSafeDefusesFormulas(t *testing.T) {
	recs := []Record{{URL: "http://a.test/", Title: `=HYPERLINK("http://evil.test","x")`, Lang: "+1", Text: "-2", DuplicateOf: "@SUM(A1)"},
		{URL: "http://a.test/y", Title: "plain = text", Text: "\tcmd"}}
	for _, safe := range []bool{false, true} {
		var buf bytes.Buffer
		enc, err := newEncoder("csv", &buf, []string{"url", "title", "lang", "text", "duplicateOf"}, nil, safe)
		if err != nil {
			t.Fatal(err)
		}
		for i := range recs {
			if err := enc.encode(&recs[i], nil); err != nil {
				t.Fatal(err)
			}
		}
		if err := enc.close(); err != nil {
			t.Fatal(err)
		}
		rows, err := csv.NewReader(&buf).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		want := [][]string{{"http://a.test/", `=HYPERLINK("http://evil.test","x")`, "+1", "-2", "@SUM(A1)"}, {"http://a.test/y", "plain = text", "", "\tcmd", ""}}
		if safe {
			want = [][]string{{"http://a.test/", `'=HYPERLINK("http://evil.test","x")`, "'+1", "'-2", "'@SUM(A1)"}, {"http://a.test/y", "plain = text", "", "'\tcmd", ""}}
		}
		if got := rows[1:]; !reflect.DeepEqual(got, want) {
			t.Errorf("csvSafe %v: %q; want %q", safe, got, want)
		}
	}
}
