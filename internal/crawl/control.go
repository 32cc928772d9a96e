package crawl

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// AddSeeds is the add-seeds signal's payload: URLs to admit to a running crawl as seeds.
type AddSeeds struct {
	Seeds []string `json:"seeds"`
}

// Replay is the replay-dead-letters signal's payload: which dead letters to fetch again (by
// exact host, by a case-insensitive substring of the reason; empty matches all).
type Replay struct {
	Host   string `json:"host,omitempty"`
	Reason string `json:"reason,omitempty"`
}

// Block is the block signal's payload: hosts (with their subdomains) and URL patterns (Go
// regular expressions) the crawl must not fetch from now on.
type Block struct {
	Hosts    []string `json:"hosts,omitempty"`
	Patterns []string `json:"patterns,omitempty"`
}

// Validate says what is wrong with a block request, cleaning its hosts to lower case.
func (b *Block) Validate() error {
	if len(b.Hosts)+len(b.Patterns) == 0 {
		return errors.New("block: give at least one host or pattern")
	}
	var errs []error
	for i, h := range b.Hosts {
		h = strings.ToLower(strings.TrimSpace(h))
		if h == "" || strings.ContainsAny(h, "/ \t") {
			errs = append(errs, fmt.Errorf("block: %q is not a host name", b.Hosts[i]))
		}
		b.Hosts[i] = h
	}
	for _, p := range b.Patterns {
		if _, err := regexp.Compile(p); err != nil {
			errs = append(errs, fmt.Errorf("block: pattern %q: %v", p, err))
		}
	}
	return errors.Join(errs...)
}

// ControlResult is what a crawl control did, as the crawl's progress reports it.
type ControlResult struct {
	Signal string         `json:"signal"`
	Error  string         `json:"error,omitempty"`
	Hosts  map[string]int `json:"hosts,omitempty"` // replay: URLs queued again per host
	Count  int64          `json:"count"`           // seeds admitted, URLs replayed, queued URLs blocked
}
