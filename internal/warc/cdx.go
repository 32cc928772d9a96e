package warc

import (
	"encoding/json"
	"net/url"
	"sort"
	"strings"
	"time"
)

// CDXEntry locates one capture: the CDXJ line of a response or revisit record.
type CDXEntry struct {
	URL      string
	Time     time.Time
	Mime     string
	Status   int
	Digest   string
	Filename string
	Offset   int64
	Length   int64
	Revisit  bool
}

// SURT is the Sort-friendly URI Reordering Transform used as CDX keys:
// http://www.Example.com:80/a?b=1 → com,example)/a?b=1 (scheme, default port and www dropped,
// host labels reversed, lower-cased; query parameters sorted).
func SURT(raw string) string {
	raw = escapeControls(raw)
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return strings.ToLower(strings.ReplaceAll(raw, " ", "%20")) // (a key has no spaces: they end it)
	}
	host := strings.ToLower(u.Hostname())
	host = strings.TrimPrefix(host, "www.")
	labels := strings.Split(host, ".")
	for i, j := 0, len(labels)-1; i < j; i, j = i+1, j-1 {
		labels[i], labels[j] = labels[j], labels[i]
	}
	key := strings.Join(labels, ",")
	if p := u.Port(); p != "" && !(p == "80" && u.Scheme == "http") && !(p == "443" && u.Scheme == "https") {
		key += ":" + p
	}
	path := u.EscapedPath()
	if path == "" {
		path = "/"
	}
	key += ")" + strings.ToLower(path)
	if u.RawQuery != "" {
		params := strings.Split(u.RawQuery, "&")
		sort.Strings(params)
		key += "?" + strings.ToLower(strings.Join(params, "&"))
	}
	return key
}

// Timestamp14 is the CDX time key: yyyyMMddhhmmss, UTC.
func Timestamp14(t time.Time) string { return t.UTC().Format("20060102150405") }

// Line renders the entry as a CDXJ line (pywb's field names), without the newline.
func (e CDXEntry) Line() string {
	fields := map[string]string{
		"url": e.URL, "mime": e.Mime, "digest": e.Digest, "filename": e.Filename,
		"offset": itoa(e.Offset), "length": itoa(e.Length),
	}
	if e.Status > 0 {
		fields["status"] = itoa(int64(e.Status))
	}
	if e.Revisit {
		fields["mime"] = "warc/revisit"
	}
	var j strings.Builder
	enc := json.NewEncoder(&j)
	enc.SetEscapeHTML(false) // URLs keep their & and <: CDXJ is not HTML
	_ = enc.Encode(fields)   // map keys marshal sorted: stable lines
	return SURT(e.URL) + " " + Timestamp14(e.Time) + " " + strings.TrimSuffix(j.String(), "\n")
}

// MIME is a Content-Type's media type as CDX records it: lower case, without parameters.
func MIME(contentType string) string {
	m, _, _ := strings.Cut(contentType, ";")
	return strings.ToLower(strings.TrimSpace(m))
}

// IsHTML says whether a Content-Type is an HTML page's: what a replayer lists as a page.
func IsHTML(contentType string) bool {
	m := MIME(contentType)
	return m == "text/html" || m == "application/xhtml+xml"
}

// SortLines orders CDXJ lines as readers binary-search them: by key, then time.
func SortLines(lines []string) { sort.Strings(lines) }

func itoa(v int64) string {
	b, _ := json.Marshal(v)
	return string(b)
}
