package fidelity

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/trawlerdev/trawler/internal/render"
	"github.com/trawlerdev/trawler/internal/store"
	"github.com/trawlerdev/trawler/internal/urlnorm"
)

// replay answers a page's requests from the crawl's captures alone — what its WARC records
// hold, read from the rows and bodies they are written from: the last answer archived for
// the URL, redirects followed within the archive; a URL never archived fails, counted.
type replay struct {
	m        *Measurer
	crawlID  string
	requests atomic.Int64
	missing  atomic.Int64

	mu   sync.Mutex
	urls []string // the first few requests not archived
}

// miss counts a request the archive cannot answer.
func (r *replay) miss(u string) render.Answer {
	r.missing.Add(1)
	r.mu.Lock()
	if len(r.urls) < store.MaxMissingURLs {
		r.urls = append(r.urls, u)
	}
	r.mu.Unlock()
	return render.Answer{Block: "not archived"}
}

func (r *replay) answer(ctx context.Context, req render.Request) render.Answer {
	r.requests.Add(1)
	target := req.URL
	for range maxHops + 1 {
		n, err := r.m.Norm.Normalize(target)
		if err != nil {
			return r.miss(req.URL)
		}
		a, ok, err := r.m.Store.Archive().LastAnswer(ctx, r.crawlID, urlnorm.Hash(n))
		switch {
		case err != nil:
			return render.Answer{Block: err.Error()}
		case !ok:
			return r.miss(req.URL)
		case a.Location != "":
			target = a.Location
			continue
		}
		var body []byte
		if a.BodyKey != "" {
			if body, err = r.m.Body(ctx, a.BodyKey); err != nil {
				return render.Answer{Block: "body: " + err.Error()}
			}
		}
		return render.Answer{Status: a.Status, ContentType: a.ContentType, Body: body}
	}
	return render.Answer{Block: "too many redirects"}
}
