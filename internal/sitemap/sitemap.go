// Package sitemap owns reading sitemaps (sitemaps.org protocol): <urlset> and <sitemapindex>
// documents, gzip-compressed or not, within the protocol's limits (50,000 entries, 50 MB
// uncompressed), streamed so a hostile file costs bounded memory.
package sitemap

import (
	"bytes"
	"compress/gzip"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
)

// Limits from the protocol.
const (
	MaxEntries = 50_000
	MaxBytes   = 50 << 20
	// MaxLocBytes is the longest <loc> kept (the crawler's URL length cap); a longer one is
	// dropped without being built further.
	MaxLocBytes = 2048
)

// Entry is one <url> or <sitemap> element.
type Entry struct {
	Loc        string
	LastMod    time.Time // zero when absent or unreadable
	ChangeFreq string
	Priority   float64 // -1 when absent
}

// Sitemap is a parsed document: either URLs (a urlset) or further sitemaps (an index).
type Sitemap struct {
	Index     bool
	Entries   []Entry
	Truncated bool // more than MaxEntries, or the body hit MaxBytes
}

// Parse reads body, gunzipping it when it starts with the gzip magic bytes.
func Parse(body []byte) (*Sitemap, error) {
	var r io.Reader = bytes.NewReader(body)
	if len(body) >= 2 && body[0] == 0x1f && body[1] == 0x8b {
		zr, err := gzip.NewReader(r)
		if err != nil {
			return nil, fmt.Errorf("sitemap: gzip: %w", err)
		}
		defer zr.Close()
		r = zr
	}
	lr := &io.LimitedReader{R: r, N: MaxBytes}
	dec := xml.NewDecoder(lr)
	dec.Strict = false
	dec.CharsetReader = func(_ string, in io.Reader) (io.Reader, error) { return in, nil }
	sm := &Sitemap{}
	var cur *Entry
	var field string
	// A <loc> may come in many pieces (comments, entities, CDATA sections between its
	// characters): it is built in one buffer, never by repeated concatenation, which made a
	// hostile sitemap cost quadratic time, and not past MaxLocBytes.
	var loc strings.Builder
	locTooLong := false
	rootSeen := false
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			if lr.N <= 0 {
				sm.Truncated = true
				break
			}
			if len(sm.Entries) > 0 {
				sm.Truncated = true // keep what was readable
				break
			}
			return nil, fmt.Errorf("sitemap: %w", err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			name := strings.ToLower(t.Name.Local)
			switch {
			case !rootSeen:
				rootSeen = true
				switch name {
				case "sitemapindex":
					sm.Index = true
				case "urlset":
				default:
					return nil, fmt.Errorf("sitemap: root element <%s> is neither urlset nor sitemapindex", t.Name.Local)
				}
			case name == "url" || name == "sitemap":
				cur = &Entry{Priority: -1}
				loc.Reset()
				locTooLong = false
			case cur != nil:
				field = name
			}
		case xml.CharData:
			if cur == nil || field == "" {
				continue
			}
			v := strings.TrimSpace(string(t))
			switch field {
			case "loc":
				if locTooLong || loc.Len()+len(v) > MaxLocBytes {
					locTooLong = true
					loc.Reset()
				} else {
					loc.WriteString(v)
				}
			case "lastmod":
				cur.LastMod = parseTime(v)
			case "changefreq":
				cur.ChangeFreq = strings.ToLower(v)
			case "priority":
				var p float64
				if _, err := fmt.Sscanf(v, "%g", &p); err == nil && p >= 0 && p <= 1 {
					cur.Priority = p
				}
			}
		case xml.EndElement:
			name := strings.ToLower(t.Name.Local)
			if (name == "url" || name == "sitemap") && cur != nil {
				if !locTooLong {
					cur.Loc = loc.String()
				}
				if cur.Loc != "" {
					if len(sm.Entries) >= MaxEntries {
						sm.Truncated = true
						return sm, nil
					}
					sm.Entries = append(sm.Entries, *cur)
				}
				cur = nil
			}
			field = ""
		}
	}
	if !rootSeen {
		return nil, errors.New("sitemap: empty document")
	}
	return sm, nil
}

func parseTime(v string) time.Time {
	for _, layout := range []string{time.RFC3339, "2006-01-02T15:04Z07:00", "2006-01-02"} {
		if t, err := time.Parse(layout, v); err == nil {
			return t
		}
	}
	return time.Time{}
}
