package store

// This file holds the exact-duplicate verdict of a run of documents, decided before the run
// is saved (saveRun, documents_set.go).

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// firstByContentSQL reads, before a run of documents ($1 crawls, $2 URL hashes, $3 content
// hashes) is saved, what decides each one's first document by content: the crawl's first
// document with its content hash as the table holds it (none where the hash is NULL), and
// when the document itself was first processed (NULL: it is new). firstByContent resolves
// them with the run's own documents, as if the run were saved first.
const firstByContentSQL = `SELECT o.url_hash, o.processed_at, s.processed_at
	FROM unnest($1::text[], $2::bytea[], $3::bytea[]) WITH ORDINALITY AS t(c, h, ch, ord)
	LEFT JOIN LATERAL (SELECT d.url_hash, d.processed_at FROM documents d WHERE d.crawl_id = t.c AND d.content_hash = t.ch
		ORDER BY d.processed_at, d.url_hash LIMIT 1) o ON true
	LEFT JOIN documents s ON s.crawl_id = t.c AND s.url_hash = t.h
	ORDER BY t.ord`

// firstByContentOthersSQL is firstByContentSQL's first document for one document ($1 crawl,
// $2 content hash) among the documents not in its run ($3 the run's URL hashes in that
// crawl): asked only when the first the table holds is a document of the run whose content
// changed, which will no longer have that hash once the run is saved.
const firstByContentOthersSQL = `SELECT d.url_hash, d.processed_at FROM documents d
	WHERE d.crawl_id = $1 AND d.content_hash = $2 AND d.url_hash <> ALL($3::bytea[])
	ORDER BY d.processed_at, d.url_hash LIMIT 1`

// firstRow is what firstByContentSQL read for a document: the first document with its
// content hash the table holds (nil: none) and when that one was processed, and when the
// document itself was first processed (nil: it is new).
type firstRow struct {
	hash []byte
	at   *time.Time
	own  *time.Time
}

// firstByContent marks each document of a run that exactly duplicates an earlier one,
// deciding before the run is saved what the table would say after: the first document with
// its content hash, by processed_at and then URL hash, where a document saved again keeps its
// processed_at and a new one is processed after every saved one, in the run's order.
func firstByContent(ctx context.Context, tx pgx.Tx, preps []docPrep, firsts []firstRow, dups []*Dup) error {
	type place struct {
		crawl string
		hash  string
	}
	type candidate struct {
		hash []byte
		at   *time.Time // nil: saved new by this run, after every saved document
		ord  int        // its order in the run, for those saved new
	}
	before := func(a, b candidate) bool {
		switch {
		case a.at != nil && b.at != nil:
			if !a.at.Equal(*b.at) {
				return a.at.Before(*b.at)
			}
			return string(a.hash) < string(b.hash)
		case a.at != nil || b.at != nil:
			return a.at != nil
		}
		return a.ord < b.ord
	}
	inRun := make(map[place]int, len(preps)) // the run's documents, by crawl and URL hash
	byContent := map[place][]int{}           // the run's documents, by crawl and content hash
	for i, p := range preps {
		inRun[place{p.d.CrawlID, string(p.d.Hash)}] = i
		if p.d.ContentHash != nil {
			k := place{p.d.CrawlID, string(p.d.ContentHash)}
			byContent[k] = append(byContent[k], i)
		}
	}
	for i, p := range preps {
		if p.d.ContentHash == nil {
			continue
		}
		var best *candidate
		consider := func(c candidate) {
			if best == nil || before(c, *best) {
				best = &c
			}
		}
		f := firsts[i]
		if f.hash != nil {
			// The table's first is one of the run's documents whose content changes: once the
			// run is saved it no longer has this hash, so the first is among the others.
			if j, ok := inRun[place{p.d.CrawlID, string(f.hash)}]; ok && string(preps[j].d.ContentHash) != string(p.d.ContentHash) {
				var others [][]byte
				for _, q := range preps {
					if q.d.CrawlID == p.d.CrawlID {
						others = append(others, q.d.Hash)
					}
				}
				f.hash, f.at = nil, nil
				err := tx.QueryRow(ctx, firstByContentOthersSQL, p.d.CrawlID, p.d.ContentHash, others).Scan(&f.hash, &f.at)
				if err != nil && !errors.Is(err, pgx.ErrNoRows) {
					return fmt.Errorf("find duplicates: %w", err)
				}
			}
			if f.hash != nil {
				consider(candidate{hash: f.hash, at: f.at})
			}
		}
		for _, j := range byContent[place{p.d.CrawlID, string(p.d.ContentHash)}] {
			consider(candidate{hash: preps[j].d.Hash, at: firsts[j].own, ord: j})
		}
		if best != nil && string(best.hash) != string(p.d.Hash) {
			dups[i] = &Dup{Of: best.hash, Kind: DupExact}
		}
	}
	return nil
}
