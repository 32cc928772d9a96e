package content

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"net/url"
	"strings"
	"time"

	"golang.org/x/net/html/charset"
)

// FeedItem is one entry of a feed: the page it links to and when the feed says it was
// published or last updated (zero when it does not say, or says it unreadably).
type FeedItem struct {
	URL  string
	Date time.Time
}

// FeedDoc is what a feed yields: its title and its items, in feed order.
type FeedDoc struct {
	Title string
	Items []FeedItem
}

// maxFeedTokens bounds the work on one feed, whatever its size or nesting.
const maxFeedTokens = 2_000_000

// ParseFeed reads an RSS 0.9x/2.0, RSS 1.0 (RDF) or Atom feed fetched from base, keeping at
// most maxItems items with a link. Links resolve against base (and Atom's xml:base is not
// followed: the feed URL is the base). Broken XML ends the read where it breaks: the items
// before it are kept. An error means nothing readable was found.
func ParseFeed(body []byte, contentType string, base *url.URL, maxItems int) (*FeedDoc, error) {
	d := xml.NewDecoder(bytes.NewReader(body))
	d.Strict, d.Entity = false, xml.HTMLEntity // (no HTML auto-close: RSS's <link> holds text)
	d.CharsetReader = charset.NewReaderLabel
	doc := &FeedDoc{}
	var path []string // local names of the open elements
	var item *FeedItem
	var text strings.Builder
	resolve := func(raw string) string {
		raw = strings.TrimSpace(raw)
		if raw == "" {
			return ""
		}
		u, err := base.Parse(raw)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
			return ""
		}
		u.Fragment = ""
		return u.String()
	}
	found := false
	for n := 0; n < maxFeedTokens && len(doc.Items) < maxItems; n++ {
		tok, err := d.Token()
		if err != nil {
			if errors.Is(err, io.EOF) || found {
				break
			}
			return nil, err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			name := strings.ToLower(t.Name.Local)
			if len(path) == 0 {
				if name != "rss" && name != "rdf" && name != "feed" {
					return nil, errors.New("content: not a feed: the root is <" + name + ">")
				}
				found = true
			}
			path = append(path, name)
			text.Reset()
			switch {
			case name == "item" || name == "entry":
				item = &FeedItem{}
			case name == "link" && item != nil:
				// Atom: <link href="…" rel="alternate"/> (rel absent means alternate).
				var href, rel string
				for _, a := range t.Attr {
					switch strings.ToLower(a.Name.Local) {
					case "href":
						href = a.Value
					case "rel":
						rel = strings.ToLower(a.Value)
					}
				}
				if href != "" && (rel == "" || rel == "alternate") && item.URL == "" {
					item.URL = resolve(href)
				}
			}
		case xml.CharData:
			if text.Len() < 4096 {
				text.Write(t)
			}
		case xml.EndElement:
			if len(path) == 0 {
				continue
			}
			name := path[len(path)-1]
			path = path[:len(path)-1]
			value := strings.TrimSpace(text.String())
			text.Reset()
			switch {
			case (name == "item" || name == "entry") && item != nil:
				if item.URL != "" {
					doc.Items = append(doc.Items, *item)
				}
				item = nil
			case item != nil:
				switch name {
				case "link":
					if item.URL == "" {
						item.URL = resolve(value)
					}
				case "guid":
					if item.URL == "" && strings.HasPrefix(value, "http") {
						item.URL = resolve(value)
					}
				case "pubdate", "date", "published", "updated", "issued", "modified":
					if at := parseFeedDate(value); !at.IsZero() && at.After(item.Date) {
						item.Date = at
					}
				}
			case name == "title" && item == nil && doc.Title == "":
				doc.Title = capRunes(value, 1000)
			}
		}
	}
	if !found {
		return nil, errors.New("content: not a feed")
	}
	return doc, nil
}

// feedDateLayouts are the date forms feeds use: RFC 822/1123 in RSS (with and without the
// weekday, with numeric or named zones), RFC 3339 in Atom and Dublin Core.
var feedDateLayouts = []string{
	time.RFC1123Z, time.RFC1123, "Mon, 2 Jan 2006 15:04:05 -0700", "Mon, 2 Jan 2006 15:04:05 MST",
	"2 Jan 2006 15:04:05 -0700", "2 Jan 2006 15:04:05 MST", "Mon, 02 Jan 06 15:04:05 -0700", "Mon, 2 Jan 2006 15:04 -0700",
	time.RFC3339Nano, time.RFC3339, "2006-01-02T15:04:05", "2006-01-02",
}

func parseFeedDate(s string) time.Time {
	s = strings.TrimSpace(s)
	for _, layout := range feedDateLayouts {
		if t, err := time.Parse(layout, s); err == nil {
			return t
		}
	}
	return time.Time{}
}
