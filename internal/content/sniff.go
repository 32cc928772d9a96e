// Package content owns what a fetched body is and what is read from bodies that are not HTML:
// the kind of a body, from its Content-Type and, when the header lies, from its first bytes
// (Sniff); the text of text/plain; the links and dates of RSS and Atom feeds (Feed); the text
// and links of PDF documents (PDF, through poppler's pdftotext in a bounded child process).
// HTML itself is internal/parse's.
package content

import (
	"bytes"
	"mime"
	"net/http"
	"strings"
)

// Kind is what a body is, as far as the crawler reads it.
type Kind string

// The kinds of body. Other bodies are stored (the WARC capture) and not read.
const (
	HTML  Kind = "html"
	PDF   Kind = "pdf"
	Feed  Kind = "feed" // RSS or Atom
	Text  Kind = "text" // text/plain
	Other Kind = "other"
)

// Read says whether bodies of the kind are processed (text and links extracted).
func (k Kind) Read() bool { return k != Other }

// sniffBytes is how much of a body the sniffers look at (as http.DetectContentType does).
const sniffBytes = 512

// Sniff decides a body's kind from its Content-Type header and its first bytes. The bytes win
// where servers are known to lie: a PDF is a PDF whatever the header says ("%PDF-" leads), a
// feed served as text/xml or text/html is a feed, and a body with a missing or generic type
// (application/octet-stream, text/plain, binary/octet-stream) that starts like HTML is HTML.
// A declared HTML type whose body is an image, an archive or other binary is Other.
func Sniff(contentType string, body []byte) Kind {
	head := body
	if len(head) > sniffBytes {
		head = head[:sniffBytes]
	}
	if bytes.HasPrefix(bytes.TrimLeft(head, " \t\r\n"), []byte("%PDF-")) {
		return PDF
	}
	media := mediaType(contentType)
	detected := http.DetectContentType(head)
	if looksLikeFeed(head) && (media == "" || strings.Contains(media, "xml") || media == "text/html" || media == "text/plain" ||
		generic(media)) {
		return Feed
	}
	switch {
	case media == "application/pdf" || media == "application/x-pdf":
		return Other // declared PDF that is not one (no %PDF- header): nothing to read
	case media == "text/html" || media == "application/xhtml+xml":
		if binary(detected) {
			return Other
		}
		return HTML
	case media == "application/rss+xml" || media == "application/atom+xml":
		return Feed
	case media == "" || generic(media) || media == "text/plain":
		if strings.HasPrefix(detected, "text/html") {
			return HTML
		}
		if media == "" && !binary(detected) && strings.HasPrefix(detected, "text/") {
			return HTML // no type at all: read as HTML, as browsers do with text
		}
		if media == "text/plain" && !binary(detected) {
			return Text
		}
	}
	return Other
}

// MediaType is a body's media type as recorded for a body not read: the header's, or what
// its bytes look like when the header names none.
func MediaType(contentType string, body []byte) string {
	if t := mediaType(contentType); t != "" {
		return t
	}
	head := body
	if len(head) > sniffBytes {
		head = head[:sniffBytes]
	}
	t, _, _ := strings.Cut(http.DetectContentType(head), ";")
	return t
}

// mediaType is the header's media type, lower case, without parameters ("" when missing or
// unreadable).
func mediaType(contentType string) string {
	if contentType == "" {
		return ""
	}
	if t, _, err := mime.ParseMediaType(contentType); err == nil {
		return t
	}
	t, _, _ := strings.Cut(contentType, ";")
	return strings.ToLower(strings.TrimSpace(t))
}

// generic types say nothing about the body.
func generic(media string) bool {
	return media == "application/octet-stream" || media == "binary/octet-stream" || media == "application/unknown" ||
		media == "application/x-unknown" || media == "unknown/unknown"
}

func binary(detected string) bool {
	return !strings.HasPrefix(detected, "text/") && detected != "application/xml" && detected != "application/json"
}

// looksLikeFeed reports XML whose first element is an RSS, RDF or Atom root.
func looksLikeFeed(head []byte) bool {
	s := strings.ToLower(string(head))
	i := 0
	for i < len(s) { // skip the prolog: <?xml …?>, comments, doctype, white space
		rest := strings.TrimLeft(s[i:], " \t\r\n\ufeff")
		i = len(s) - len(rest)
		switch {
		case strings.HasPrefix(rest, "<?"), strings.HasPrefix(rest, "<!"):
			end := strings.Index(rest, ">")
			if end < 0 {
				return false
			}
			i += end + 1
		case strings.HasPrefix(rest, "<rss"), strings.HasPrefix(rest, "<rdf:rdf"):
			return true
		case strings.HasPrefix(rest, "<feed"):
			return strings.Contains(rest, "http://www.w3.org/2005/atom")
		default:
			return false
		}
	}
	return false
}
