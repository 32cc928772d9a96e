package store

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/trawlerdev/trawler/internal/crawl"
)

// Document is a processed page.
type Document struct {
	CrawlID     string
	Hash        []byte
	ContentHash []byte
	BodyKey     string
	TextKey     string
	Title       string
	Lang        string
	Charset     string
	ContentType string
	Size        int64
	Canonical   string
	NoIndex     bool
	NoFollow    bool
	// RobotsSignal says which signal made the document noindex, nofollow or noarchive:
	// "x-robots-tag: noindex; meta: nofollow" ("" when none did).
	RobotsSignal string
	LinksOut     int
	TextBytes    int
	RecrawlAt    *time.Time // nil: the URL is done; else it is queued again for then
	RecrawlS     int        // the URL's recrawl interval now, in seconds (0: unchanged)
	// Extract is what the crawl's extraction rules found, as JSON (nil: none ran or matched).
	Extract []byte
	// Deliver queues the document for the crawl's outputs (spec.outputs) when it is new or
	// its payload changed (delivery_queue): crawls without outputs write no queue.
	Deliver bool
}

// NearDup is a document's near-duplicate detection as its save needs it: its fingerprint as
// stored (the SimHash and the encoded MinHash signature), the index keys it is filed under,
// and Judge, the verdict among the candidates those keys find. The store finds candidates
// under the save's locks and records what Judge says; the detector's rules are the process
// stage's (processing.NearDup), never the store's.
type NearDup struct {
	SimHash int64
	MinHash []byte
	Keys    []int64
	// Blocks are the keys (among Keys) that file the SimHash by blocks: a document under one
	// of them is a candidate only within MaxBits of SimHash, checked in the index, which
	// holds each document's SimHash (a block is there to find SimHash matches; MinHash
	// matches are found by the other keys). A block's random companions grow with the crawl
	// (about one in 65,536 documents shares any 16-bit block) and were each a document read.
	Blocks  []int64
	MaxBits int
	Judge   func(cands []NearCandidate) *Dup
}

// NearCandidate is a document a near-duplicate lookup found: its fingerprint as stored, and
// whether it is an original (itself no duplicate).
type NearCandidate struct {
	Hash     []byte
	SimHash  int64
	MinHash  []byte
	Original bool
}

// Dup is a duplicate verdict: the document duplicated, by which detector, how closely.
type Dup struct {
	Of    []byte
	Kind  string  // DupExact, or the near-duplicate detector's (dedup.KindSimHash, KindMinHash)
	Score float64 // SimHash: bits apart; MinHash: estimated Jaccard; exact: 0
}

// DupExact is the kind of an exact duplicate: a document whose content hash an earlier
// document of the crawl has (the first such document is the original).
const DupExact = "exact"

// Link is an edge of the web graph.
type Link struct {
	From, To []byte
	NoFollow bool
	Kind     string // how the page links it (parse.Link*: a, iframe, refresh, next, hreflang …)
}

// SaveDocument stores a processed page, decides whether it duplicates an earlier document of
// the crawl — exactly (same content hash: the first such document) or nearly (the detector's
// best match among the candidates its index keys find) — files its near-duplicate keys and
// records its out-links. Documents that could match each other take the same advisory locks
// first, so two workers saving near-duplicates at once cannot both miss each other. Running
// it twice for the same page changes nothing the second time.
func (agg Documents) SaveDocument(ctx context.Context, d Document, links []Link, near *NearDup) (*Dup, error) {
	s := agg.s
	dups, err := s.Documents().SaveDocuments(ctx, []DocumentSave{{Doc: d, Links: links, Near: near}})
	if err != nil {
		return nil, err
	}
	return dups[0], nil
}

// DocumentSave is one document to save, with its out-links and its near-duplicate detection
// (nil: none — the crawl detects none, or the text is too short to fingerprint).
type DocumentSave struct {
	Doc   Document
	Links []Link
	Near  *NearDup
}

// SaveDocuments is SaveDocument for a batch, in one transaction of three round trips whatever
// the batch holds (and one more for a document whose content left a group it was the first
// of), its writes one statement each for the whole batch (documents_set.go): lock every
// document's URL and content and the crawl's near-duplicates (lockKeys), find exact
// duplicates; find near-duplicate candidates (a later document sees an earlier one's keys);
// save the documents with their verdicts, file their keys and record their out-links. It
// returns each document's verdict. One document Postgres refuses fails the batch
// (IsDataError): save them one by one then.
func (agg Documents) SaveDocuments(ctx context.Context, saves []DocumentSave) ([]*Dup, error) {
	s := agg.s
	preps := make([]docPrep, len(saves))
	var locks []int64
	for i, sv := range saves {
		p := docPrep{d: sv.Doc}
		if n := sv.Near; n != nil {
			v := n.SimHash
			// (each key once: the index is not unique, schema 0039; a document's SimHash
			// and MinHash keys are distinct as they are keyed, and stay so if that changes)
			p.keys, p.simhash, p.minhash = slices.Compact(slices.Sorted(slices.Values(n.Keys))), &v, n.MinHash
			p.blocks, p.maxBits = n.Blocks, n.MaxBits
		}
		d := &p.d
		d.Title, d.Lang, d.Charset, d.ContentType, d.Canonical = Text(d.Title), Text(d.Lang), Text(d.Charset), Text(d.ContentType), Text(d.Canonical)
		locks = append(locks, lockKeys(d.CrawlID, d.Hash, d.ContentHash, len(p.keys) > 0)...)
		preps[i] = p
	}
	dups := make([]*Dup, len(saves))
	save := func(tx pgx.Tx) error {
		clear(dups)
		lock := locks
		// A document twice in the batch (one statement cannot upsert a row twice) splits it
		// into runs, saved in order.
		for from := 0; from < len(preps); {
			to, seen := from, map[string]bool{}
			for ; to < len(preps); to++ {
				k := preps[to].d.CrawlID + "\x00" + string(preps[to].d.Hash)
				if seen[k] {
					break
				}
				seen[k] = true
			}
			if err := saveRun(ctx, tx, preps[from:to], saves[from:to], dups[from:to], lock); err != nil {
				return err
			}
			from, lock = to, nil // (every lock is taken with the first run)
		}
		return nil
	}
	err := pgx.BeginFunc(ctx, s.pool, save)
	if errors.Is(err, errNearIndexLost) {
		if err = s.rebuildNearIndex(ctx); err == nil {
			err = pgx.BeginFunc(ctx, s.pool, save)
		}
	}
	if err != nil {
		if len(saves) == 1 {
			return nil, fmt.Errorf("store: document %x: %w", saves[0].Doc.Hash, err)
		}
		return nil, fmt.Errorf("store: %d documents: %w", len(saves), err)
	}
	return dups, nil
}

// sendBatch sends b in tx and reads its results with read, closing the results either way.
func sendBatch(ctx context.Context, tx pgx.Tx, b *pgx.Batch, read func(pgx.BatchResults) error) error {
	br := tx.SendBatch(ctx, b)
	if err := read(br); err != nil {
		_ = br.Close()
		return err
	}
	return br.Close()
}

// maxNearCandidates bounds the candidates one lookup verifies (a hot key — thousands of pages
// sharing a band, or a SimHash block within a few bits, as a site's template can make — must
// not make a lookup read and verify them all).
const maxNearCandidates = 500

// lockKeys maps a document to the advisory-lock keys its save takes, scoped to its crawl: its
// content's (exact duplicates saved at once), its URL's (two saves of one page, as two runs may
// process it: the second decides its verdict and clears the keys the first filed only once the
// first has committed) and, when it has near-duplicate keys, the crawl's one near-duplicate
// lock, so near-duplicates saved at once never miss each other. A lock a near-duplicate key
// (20 a document) took about 4,400 locks a batch of 200: a few lanes could fill the server's
// shared lock table (sized max_locks_per_transaction × max_connections: 6,400 at Postgres's
// defaults; one transaction took 20,000 but not 25,000 on the stack's server of 200
// connections) and fail saves with "out of shared memory"; and the keys of SimHash blocks,
// which any two batches share by chance (800 of 262,144 values each), made concurrent saves of
// a crawl wait for each other all the same (92–134 s of waits in a 4-minute make bench).
func lockKeys(crawlID string, urlHash, contentHash []byte, near bool) []int64 {
	base := fnv.New64a()
	_, _ = base.Write([]byte(crawlID))
	crawl := base.Sum64()
	out := make([]int64, 0, 3)
	h := fnv.New64a()
	_, _ = h.Write(contentHash)
	out = append(out, int64(h.Sum64()^crawl))
	u := fnv.New64a()
	_, _ = u.Write([]byte("url\x00"))
	_, _ = u.Write(urlHash)
	out = append(out, int64(u.Sum64()^crawl))
	if near {
		n := fnv.New64a()
		_, _ = n.Write([]byte("near\x00"))
		_, _ = n.Write([]byte(crawlID))
		out = append(out, int64(n.Sum64()))
	}
	return out
}

// lastBodySQL picks, among a URL's fetches, those with the body its row (alias u, with
// urls.body_key) names: the last recorded fetch with a body, the one sameFetchSQL checks. A
// claim that picked the newest by fetched_at would hand out an older body whenever the recrawl
// was recorded by a worker whose clock runs behind, and its processing could never finish the
// page: the crawl would not end. (An unchanged recrawl keeps its body: of the fetches that
// name it, a claim takes the last recorded, by id, for the same reason.)
func lastBodySQL(u string) string {
	return "body_key IS NOT NULL AND (" + u + ".body_key IS NULL OR body_key = " + u + ".body_key)"
}

// sameFetchSQL says that a fetched URL's body (column, urls.body_key: its last fetch's with a
// body, the one a claim hands out) is the one its processing read (key; ”: whichever). A page
// is finished or set aside only for that fetch: two runs may process one page (a run Temporal
// timed out goes on beside its retry), and the later must not end a newer fetch of it,
// recrawled in between, with the older one's verdict.
func sameFetchSQL(column, key string) string {
	return "(" + key + " = '' OR " + column + " IS NULL OR " + column + " = " + key + ")"
}

// FinishProcessed ends the processing of a crawl's saved documents: each URL is done, or
// queued again for its recrawl. Called only once their links are admitted: a URL still
// "fetched" keeps the crawl pending, so a crawl cannot end while links of a page it fetched
// are still on their way into the frontier (a process worker killed between the two leaves
// the page to its retry, or to the crawl's sweep). A page is finished only for the fetch whose
// body was processed (sameFetchSQL).
func (agg Documents) FinishProcessed(ctx context.Context, docs []Document) error {
	s := agg.s
	if len(docs) == 0 {
		return nil
	}
	crawls, hashes, bodies := make([]string, len(docs)), make([][]byte, len(docs)), make([]string, len(docs))
	at, secs := make([]*time.Time, len(docs)), make([]int32, len(docs))
	for i, d := range docs {
		crawls[i], hashes[i], bodies[i], at[i], secs[i] = d.CrawlID, d.Hash, d.BodyKey, d.RecrawlAt, int32(d.RecrawlS)
	}
	// The pages' hosts are told as this commits: a fetch lease waiting on its pages'
	// processing looks again at once.
	_, err := s.pool.Exec(ctx, `WITH u AS (
			UPDATE urls u SET state = CASE WHEN t.at IS NULL THEN 'done' ELSE 'queued' END,
				next_fetch_at = coalesce(t.at, u.next_fetch_at), recrawl_s = coalesce(nullif(t.s, 0), u.recrawl_s), updated_at = now()
			FROM unnest($1::text[], $2::bytea[], $3::timestamptz[], $4::int[], $5::text[]) AS t(c, h, at, s, b)
			WHERE u.crawl_id = t.c AND u.url_hash = t.h AND u.state = 'fetched'
				AND `+sameFetchSQL("u.body_key", "t.b")+`
			RETURNING u.host) `+notifyDueSQL(`SELECT host FROM u`), crawls, hashes, at, secs, bodies)
	if err != nil {
		return fmt.Errorf("store: finish processed pages: %w", err)
	}
	return nil
}

// MarkDone moves a fetched URL that needs no processing (or could not be processed) to done,
// for the fetch whose body was read (bodyKey; "": whichever; sameFetchSQL).
func (agg Documents) MarkDone(ctx context.Context, crawlID string, hash []byte, bodyKey, reason string) error {
	s := agg.s
	_, err := s.pool.Exec(ctx, `UPDATE urls SET state = 'done', last_error = coalesce(nullif($3, ''), last_error), updated_at = now()
		WHERE crawl_id = $1 AND url_hash = $2 AND state = 'fetched' AND `+sameFetchSQL("body_key", "$4"),
		crawlID, hash, crawl.ClipError(Text(reason)), bodyKey)
	if err != nil {
		return fmt.Errorf("store: mark done: %w", err)
	}
	return nil
}

// FetchedPage is a fetched HTML page whose processing has not finished.
type FetchedPage struct {
	CrawlID, URL, FinalURL, BodyKey, ContentType, Host string
	RobotsTag                                          string // X-Robots-Tag directives that applied to the fetch
	Hash, ContentHash                                  []byte
	Depth                                              int
	Size                                               int64
	// What the fetch found, when known (pages found by their claim owner): whether the body
	// changed (nil: first fetch), the recrawl interval before it and the sitemap hint, seconds.
	Changed         *bool
	RecrawlS, HintS int
}

// PageRefs are fetched pages as processing takes them.
func PageRefs(pages []FetchedPage) []crawl.PageRef {
	var out []crawl.PageRef
	for _, p := range pages {
		change := crawl.FirstFetch
		switch {
		case p.Changed == nil:
		case *p.Changed:
			change = crawl.Changed
		default:
			change = crawl.Unchanged
		}
		out = append(out, crawl.PageRef{CrawlID: p.CrawlID, Hash: p.Hash, URL: p.URL, FinalURL: p.FinalURL,
			BodyKey: p.BodyKey, ContentType: p.ContentType, RobotsTag: p.RobotsTag, ContentHash: p.ContentHash, Depth: p.Depth, Size: p.Size,
			Change: change, RecrawlS: p.RecrawlS, HintS: p.HintS})
	}
	return out
}

func scanFetchedPage(r pgx.CollectableRow) (FetchedPage, error) {
	var p FetchedPage
	err := r.Scan(&p.CrawlID, &p.Hash, &p.URL, &p.Host, &p.Depth, &p.FinalURL, &p.BodyKey, &p.ContentType, &p.RobotsTag, &p.ContentHash, &p.Size)
	return p, err
}

// StaleFetched returns up to limit pages of a crawl fetched before `before` and still not
// processed (their processing workflow failed for good or was lost), touching them so a
// sweep hands each out once per period.
func (agg Frontier) StaleFetched(ctx context.Context, crawlID string, before time.Time, limit int) ([]FetchedPage, error) {
	s := agg.s
	rows, err := s.pool.Query(ctx, `WITH stale AS (
			SELECT crawl_id, url_hash FROM urls WHERE crawl_id = $1 AND state = 'fetched' AND updated_at < $2
			LIMIT $3 FOR UPDATE SKIP LOCKED),
		touched AS (
			UPDATE urls u SET updated_at = now() FROM stale WHERE u.crawl_id = stale.crawl_id AND u.url_hash = stale.url_hash
			RETURNING u.crawl_id, u.url_hash, u.url, u.host, u.depth, u.body_key)
		SELECT t.crawl_id, t.url_hash, t.url, t.host, t.depth, coalesce(f.final_url, ''), f.body_key,
			coalesce(f.content_type, ''), coalesce(f.robots_tag, ''), f.content_hash, coalesce(f.bytes, 0)
		FROM touched t JOIN LATERAL (SELECT final_url, body_key, content_type, robots_tag, content_hash, bytes FROM fetches
			WHERE crawl_id = t.crawl_id AND url_hash = t.url_hash AND `+lastBodySQL("t")+`
			ORDER BY id DESC LIMIT 1) f ON true`, crawlID, before, limit)
	if err != nil {
		return nil, fmt.Errorf("store: stale fetched pages: %w", err)
	}
	return pgx.CollectRows(rows, scanFetchedPage)
}
