package store

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/trawlerdev/trawler/internal/crawl"
)

// ExtractTarget is a stored document extraction rules can run over again: its page's
// URL (the final one, as processing read it) and its stored body.
type ExtractTarget struct {
	Hash                []byte
	URL, BodyKey, CType string
}

// ExtractTargets returns up to limit of a crawl's documents after url hash after (nil: from
// the first), in hash order: which are HTML is the caller's to sniff, as processing does.
func (agg Documents) ExtractTargets(ctx context.Context, crawlID string, after []byte, limit int) ([]ExtractTarget, error) {
	if after == nil {
		after = []byte{}
	}
	rows, err := agg.s.pool.Query(ctx, `SELECT d.url_hash, coalesce(f.final_url, u.url), d.body_key, coalesce(d.content_type, '')
		FROM documents d JOIN urls u USING (crawl_id, url_hash)
		LEFT JOIN LATERAL (SELECT final_url FROM fetches f WHERE f.crawl_id = d.crawl_id AND f.url_hash = d.url_hash
			AND f.body_key = d.body_key ORDER BY f.id DESC LIMIT 1) f ON true
		WHERE d.crawl_id = $1 AND d.url_hash > $2
		ORDER BY d.url_hash LIMIT $3`, crawlID, after, limit)
	if err != nil {
		return nil, fmt.Errorf("store: documents of %s to extract: %w", crawlID, err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowToStructByPos[ExtractTarget])
	if err != nil {
		return nil, fmt.Errorf("store: documents of %s to extract: %w", crawlID, err)
	}
	return out, nil
}

// Extracted is what rules found on one document (JSON; nil: nothing).
type Extracted struct {
	Hash    []byte
	Extract []byte
}

// SetExtracted records what rules run again found on documents, replacing what was there.
func (agg Documents) SetExtracted(ctx context.Context, crawlID string, docs []Extracted) error {
	hashes, values := make([][]byte, len(docs)), make([]string, len(docs))
	for i, d := range docs {
		hashes[i], values[i] = d.Hash, string(d.Extract)
	}
	if _, err := agg.s.pool.Exec(ctx, `UPDATE documents d SET extract = nullif(t.x, '')::jsonb
		FROM unnest($2::bytea[], $3::text[]) AS t(h, x) WHERE d.crawl_id = $1 AND d.url_hash = t.h`, crawlID, hashes, values); err != nil {
		return fmt.Errorf("store: save extracted values of %s: %w", crawlID, err)
	}
	return nil
}

// SetExtractRules records the rules a crawl's documents were extracted by (spec.extract), so
// its report and exports name their fields.
func (agg Crawls) SetExtractRules(ctx context.Context, crawlID string, rules []crawl.ExtractRule) error {
	return agg.s.editSpec(ctx, crawlID, func(spec map[string]any) { spec["extract"] = rules })
}
