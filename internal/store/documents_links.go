package store

// outLinks is a page's out-links, one to each target: the first the page gave (its caller
// may list a target twice, say as a link and as a requisite).
func outLinks(links []Link) []Link {
	if len(links) < 2 {
		return links
	}
	seen := make(map[string]bool, len(links))
	out := links[:0:0]
	for _, l := range links {
		if !seen[string(l.To)] {
			seen[string(l.To)] = true
			out = append(out, l)
		}
	}
	return out
}
