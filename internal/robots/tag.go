package robots

import "strings"

// Directives are the page-level robots signals a crawler honours, from X-Robots-Tag response
// headers or <meta name="robots"> / <meta name="<product token>"> elements. The most
// restrictive reading wins: one noindex anywhere makes the page noindex.
type Directives struct {
	NoIndex   bool // do not store the page's text or count it as a document
	NoFollow  bool // do not follow (admit) the page's links
	NoArchive bool // do not offer a cached copy (recorded; the capture itself is the archive)
}

// Any says whether some directive is set.
func (d Directives) Any() bool { return d.NoIndex || d.NoFollow || d.NoArchive }

// Merge is d with e's directives added.
func (d Directives) Merge(e Directives) Directives {
	return Directives{NoIndex: d.NoIndex || e.NoIndex, NoFollow: d.NoFollow || e.NoFollow, NoArchive: d.NoArchive || e.NoArchive}
}

// String lists the set directives, comma-separated in a fixed order ("" when none); ParseList
// reads it back.
func (d Directives) String() string {
	var out []string
	if d.NoIndex {
		out = append(out, "noindex")
	}
	if d.NoFollow {
		out = append(out, "nofollow")
	}
	if d.NoArchive {
		out = append(out, "noarchive")
	}
	return strings.Join(out, ",")
}

// ParseList reads a comma-separated directive list meant for us (a meta element's content, or
// String's output).
func ParseList(list string) Directives {
	var d Directives
	for _, part := range strings.Split(list, ",") {
		d.apply(part)
	}
	return d
}

func (d *Directives) apply(directive string) {
	switch strings.ToLower(strings.TrimSpace(directive)) {
	case "noindex":
		d.NoIndex = true
	case "nofollow":
		d.NoFollow = true
	case "none":
		d.NoIndex, d.NoFollow = true, true
	case "noarchive", "nocache":
		d.NoArchive = true
	}
}

// valuedDirectives are directives whose value follows a colon: "unavailable_after: <date>" is
// a directive, not a user agent named unavailable_after.
var valuedDirectives = map[string]bool{
	"unavailable_after": true, "max-snippet": true, "max-image-preview": true, "max-video-preview": true,
}

// ParseTag reads X-Robots-Tag header values as they apply to token (a product token, matched
// without regard to case). A value may hold a comma list; "name: directives" scopes what follows it, up to the
// next name, to that user agent ("trawlerbot: noindex, nofollow"; "googlebot: noindex, otherbot:
// nofollow"). Directives with no name apply to every crawler.
func ParseTag(values []string, token string) Directives {
	token = strings.ToLower(token)
	var d Directives
	for _, v := range values {
		scope := "" // every crawler, until a value names one
		for _, part := range strings.Split(v, ",") {
			part = strings.TrimSpace(part)
			if name, rest, ok := strings.Cut(part, ":"); ok {
				name = strings.ToLower(strings.TrimSpace(name))
				if !valuedDirectives[name] {
					scope, part = name, rest
				}
			}
			if scope == "" || scope == token {
				d.apply(part)
			}
		}
	}
	return d
}
