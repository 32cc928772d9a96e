package store

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"math"
	"net/url"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/trawlerdev/trawler/internal/crawl"
)

// Answer is a URL's last answer in a crawl, as a replay serves it: its status and type, where
// its body is, and where a redirect pointed.
type Answer struct {
	Status      int
	ContentType string
	BodyKey     string // "": no body stored
	Location    string // a redirect's resolved target ("": none)
}

// LastAnswer returns the answer a replay of the crawl's WARC files gives for the URL with hash
// urlHash: its last archived capture with a body or a redirect, else its last archived error
// (a later 503 does not hide the page a replay tool shows). False: none archived.
func (agg Archive) LastAnswer(ctx context.Context, crawlID string, urlHash []byte) (Answer, bool, error) {
	s := agg.s
	var a Answer
	var rawURL string
	var head []byte
	err := s.pool.QueryRow(ctx, `SELECT u.url, f.status, coalesce(f.content_type, ''), coalesce(f.body_key, ''), coalesce(f.response_head, ''::bytea)
		FROM fetches f JOIN urls u USING (crawl_id, url_hash)
		WHERE f.crawl_id = $1 AND f.url_hash = $2 AND f.status IS NOT NULL AND f.status <> 304
			AND EXISTS (SELECT 1 FROM warc_placements p WHERE p.fetch_id = f.id)
			AND (f.body_key IS NOT NULL OR f.status NOT BETWEEN 200 AND 299)
		ORDER BY f.status BETWEEN 200 AND 399 DESC, f.fetched_at DESC LIMIT 1`, crawlID, urlHash).Scan(&rawURL, &a.Status, &a.ContentType, &a.BodyKey, &head)
	if errors.Is(err, pgx.ErrNoRows) {
		return Answer{}, false, nil
	}
	if err != nil {
		return Answer{}, false, fmt.Errorf("store: last answer: %w", err)
	}
	if a.Status >= 300 && a.Status < 400 {
		a.Location = locationIn(rawURL, string(head))
	}
	return a, true, nil
}

// locationIn is the resolved Location of a recorded response head ("": none).
func locationIn(base, head string) string {
	sc := bufio.NewScanner(strings.NewReader(head))
	for sc.Scan() {
		name, value, ok := strings.Cut(sc.Text(), ":")
		if !ok || !strings.EqualFold(strings.TrimSpace(name), "location") {
			continue
		}
		b, err1 := url.Parse(base)
		l, err2 := url.Parse(strings.TrimSpace(value))
		if err1 != nil || err2 != nil {
			return ""
		}
		return b.ResolveReference(l).String()
	}
	return ""
}

// PageFidelity is how much a page replayed from the archive looks like it live.
type PageFidelity struct {
	URL      string  `json:"url"`
	Pixels   float64 `json:"pixels"`
	Text     float64 `json:"text"`
	Score    float64 `json:"score"`
	Requests int     `json:"requests"` // requests the replay made
	Missing  int     `json:"missing"`  // of them not in the archive
	// MissingURLs are the first few of those (MaxMissingURLs), each clipped.
	MissingURLs []string  `json:"missingUrls,omitempty"`
	Error       string    `json:"error,omitempty"`
	MeasuredAt  time.Time `json:"measuredAt"`
}

// MaxMissingURLs is how many of a page's requests missing from the archive are kept.
const MaxMissingURLs = 5

// SaveFidelity records the measures of a crawl's pages, replacing earlier ones of the same pages.
func (agg Archive) SaveFidelity(ctx context.Context, crawlID string, pages []PageFidelity) error {
	s := agg.s
	// A measure replaces the last one whole: the report shows one run's sample, not a mix.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `DELETE FROM fidelity WHERE crawl_id = $1`, crawlID); err != nil {
			return err
		}
		b := &pgx.Batch{}
		for _, p := range pages {
			missing := make([]string, 0, MaxMissingURLs)
			for _, u := range p.MissingURLs[:min(len(p.MissingURLs), MaxMissingURLs)] {
				missing = append(missing, Text(crawl.ClipError(u)))
			}
			b.Queue(`INSERT INTO fidelity (crawl_id, url, pixels, text_match, score, requests, missing, missing_urls, error, measured_at)
				VALUES ($1, $2, $3, $4, $5, $6, $7, $8, nullif($9, ''), $10) ON CONFLICT (crawl_id, url) DO NOTHING`,
				crawlID, Text(p.URL), p.Pixels, p.Text, p.Score, p.Requests, p.Missing, missing, Text(crawl.ClipError(p.Error)), p.MeasuredAt)
		}
		return tx.SendBatch(ctx, b).Close()
	})
	if err != nil {
		return fmt.Errorf("store: save fidelity of %s: %w", crawlID, err)
	}
	return nil
}

// fidelitySQL reads a crawl's measured pages, the worst first (those that failed to be
// measured last).
const fidelitySQL = `SELECT url, pixels, text_match, score, requests, missing, coalesce(missing_urls, '{}'), coalesce(error, ''), measured_at
	FROM fidelity WHERE crawl_id = $1 ORDER BY error IS NOT NULL, score, url`

func scanFidelity(r pgx.CollectableRow) (PageFidelity, error) {
	var p PageFidelity
	var px, tx, sc float32
	err := r.Scan(&p.URL, &px, &tx, &sc, &p.Requests, &p.Missing, &p.MissingURLs, &p.Error, &p.MeasuredAt)
	p.Pixels, p.Text, p.Score = round4(px), round4(tx), round4(sc)
	return p, err
}

// Fidelity returns the measured pages of a crawl, the worst first.
func (agg Archive) Fidelity(ctx context.Context, crawlID string) ([]PageFidelity, error) {
	rows, err := agg.s.pool.Query(ctx, fidelitySQL, crawlID)
	if err != nil {
		return nil, fmt.Errorf("store: fidelity of %s: %w", crawlID, err)
	}
	out, err := pgx.CollectRows(rows, scanFidelity)
	if err != nil {
		return nil, fmt.Errorf("store: fidelity of %s: %w", crawlID, err)
	}
	return out, nil
}

// round4 reads a stored real back as the figure it was (4 digits), not float32's tail.
func round4(v float32) float64 { return math.Round(float64(v)*1e4) / 1e4 }
