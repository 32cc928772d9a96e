package store

import (
	"cmp"
	"context"
	"fmt"
	mathbits "math/bits"
	"slices"

	"github.com/jackc/pgx/v5"
)

// docPrep is a document ready to save: its text fields cleaned, its index keys and encoded
// fingerprint.
type docPrep struct {
	d       Document
	keys    []int64
	simhash *int64
	minhash []byte
	blocks  []int64 // the keys that are SimHash blocks (NearDup.Blocks), within maxBits
	maxBits int
}

// bitsFor is how many bits from the document's SimHash a candidate under key k may be: its
// maxBits for a SimHash block, -1 (any) for another key.
func (p docPrep) bitsFor(k int64) int32 {
	if slices.Contains(p.blocks, k) {
		return int32(p.maxBits)
	}
	return -1
}

// nearEnough says whether a document of SimHash b is a candidate under a key allowing bits
// (bitsFor) for a document of SimHash a: the index's check (nearCandidatesSQL), for the run's
// own documents.
func nearEnough(a, b int64, bits int32) bool {
	return bits < 0 || int32(mathbits.OnesCount64(uint64(a^b))) <= bits
}

// saveDocumentsSQL upserts a run of documents with their verdicts ($1…$23 in the documents'
// column order) and out-links ($24…$27: the document of each link, by its place in the run
// from 1, then its target, kind and nofollow), in order: processed_at from the clock row by row, so the first of identical
// documents stays the original. A document is written once, its verdict with it: the verdict
// is decided before the save (firstByContentSQL, nearCandidatesSQL), as rewriting each row
// after its insert cost about ten buffers and 1.4 KB of WAL a document (issue 49).
const saveDocumentsSQL = `WITH l AS (SELECT i, array_agg(lt ORDER BY n) AS lt, array_agg(lk ORDER BY n) AS lk, array_agg(lnf ORDER BY n) AS lnf
		FROM unnest($24::int[], $25::bytea[], $26::text[], $27::bool[]) WITH ORDINALITY AS x(i, lt, lk, lnf, n) GROUP BY i)
	INSERT INTO documents (crawl_id, url_hash, content_hash, body_key, text_key, title, lang, charset,
		content_type, size, canonical, noindex, nofollow, links_out, simhash, minhash, text_bytes, robots_signal, extract,
		dup_of, dup_kind, dup_score, dedup_keys, link_to, link_kind, link_nofollow, processed_at)
	SELECT c, h, ch, bk, nullif(tk, ''), ti, nullif(la, ''), nullif(cs, ''), ct, sz, nullif(ca, ''), ni, nf, lo, sh, mh, tb,
		nullif(rs, ''), nullif(ex, '')::jsonb, dof, dk, ds, dks::bigint[], l.lt, l.lk, l.lnf, clock_timestamp()
	FROM unnest($1::text[], $2::bytea[], $3::bytea[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[],
		$10::bigint[], $11::text[], $12::bool[], $13::bool[], $14::int[], $15::bigint[], $16::bytea[], $17::int[], $18::text[], $19::text[],
		$20::bytea[], $21::text[], $22::float8[], $23::text[])
		WITH ORDINALITY AS t(c, h, ch, bk, tk, ti, la, cs, ct, sz, ca, ni, nf, lo, sh, mh, tb, rs, ex, dof, dk, ds, dks, ord)
	LEFT JOIN l ON l.i = t.ord
	ORDER BY ord
	ON CONFLICT (crawl_id, url_hash) DO UPDATE SET content_hash = excluded.content_hash, body_key = excluded.body_key,
		text_key = excluded.text_key, title = excluded.title, lang = excluded.lang, charset = excluded.charset,
		content_type = excluded.content_type, size = excluded.size, canonical = excluded.canonical,
		noindex = excluded.noindex, nofollow = excluded.nofollow, links_out = excluded.links_out,
		simhash = excluded.simhash, minhash = excluded.minhash, text_bytes = excluded.text_bytes,
		robots_signal = excluded.robots_signal, extract = excluded.extract,
		dup_of = excluded.dup_of, dup_kind = excluded.dup_kind, dup_score = excluded.dup_score, dedup_keys = excluded.dedup_keys,
		link_to = excluded.link_to, link_kind = excluded.link_kind, link_nofollow = excluded.link_nofollow,
		-- a save of the same payload keeps the document's place in the outputs' order (a
		-- retried processing step would otherwise deliver it again); a new payload is a new
		-- record (its key names the digest), delivered again
		stored_tx = CASE WHEN documents.content_hash = excluded.content_hash THEN documents.stored_tx ELSE pg_current_xact_id() END`

// queueDeliveriesSQL queues for their crawl's outputs the documents of $1, $2 that this
// transaction saved new or with a new payload (their stored_tx is this transaction's).
const queueDeliveriesSQL = `INSERT INTO delivery_queue (crawl_id, stored_tx, url_hash)
	SELECT d.crawl_id, d.stored_tx, d.url_hash FROM documents d JOIN unnest($1::text[], $2::bytea[]) AS t(c, h)
		ON d.crawl_id = t.c AND d.url_hash = t.h
	WHERE d.stored_tx = pg_current_xact_id() ON CONFLICT DO NOTHING`

// clearKeysSQL deletes the near-duplicate keys the documents of $1, $2 filed before, by the
// index's key: the keys a document filed are on its row (documents.dedup_keys), which no
// other save changes meanwhile (the run holds the advisory lock of each document's URL). A
// document saved for the first time has none.
var clearKeysSQL = `DELETE FROM dedup_keys k USING (
		SELECT ` + nearKeySQL("d.crawl_id", "x") + ` AS key, d.url_hash FROM documents d
		JOIN unnest($1::text[], $2::bytea[]) AS t(c, h) ON d.crawl_id = t.c AND d.url_hash = t.h
		CROSS JOIN unnest(d.dedup_keys) x
		WHERE d.dedup_keys IS NOT NULL) o
	WHERE k.key = o.key AND k.url_hash = o.url_hash`

// nearCandidatesSQL finds, for each lookup i of a run ($1 the lookup of each key, $2 its
// document's crawl, $3 the key, $4 its document, $6 its SimHash, $7 how many bits from it a
// document filed under the key may be, -1: any), the documents filed under its keys, the
// document itself excluded, at most $5 of them, by lookup and then in the order they were
// processed. LATERAL keeps each probe an index scan, however many keys the run has; the
// SimHash each entry holds is checked in the index, before any document is read.
var nearCandidatesSQL = `SELECT c.i, d.url_hash, d.simhash, d.minhash, d.dup_of IS NULL
	FROM (SELECT i, c, self, url_hash, row_number() OVER (PARTITION BY i) AS n FROM (
			SELECT DISTINCT q.i, q.c, q.h AS self, k.url_hash
			FROM unnest($1::int[], $2::text[], $3::bigint[], $4::bytea[], $6::bigint[], $7::int[]) AS q(i, c, key, h, sh, bits)
			CROSS JOIN LATERAL (SELECT url_hash FROM dedup_keys k
				WHERE k.key = ` + nearKeySQL("q.c", "q.key") + ` AND k.url_hash <> q.h
					AND (q.bits < 0 OR bit_count(int8send(k.simhash # q.sh)) <= q.bits)) k) x) c
	CROSS JOIN LATERAL (SELECT url_hash, simhash, minhash, dup_of, processed_at FROM documents d
		WHERE d.crawl_id = c.c AND d.url_hash = c.url_hash) d
	WHERE c.n <= $5 AND d.simhash IS NOT NULL AND d.dup_of IS DISTINCT FROM c.self -- (never a duplicate of its own duplicate)
	ORDER BY c.i, d.processed_at, d.url_hash`

// saveRun saves a run of documents (no document twice) in tx, taking locks (sorted advisory
// locks of every document's URL and content, and of its crawl's near-duplicates: lockKeys)
// first, in three pipelined round trips (and one more for each document whose content left a
// group it was the first of): lock, find exact duplicates and clear the keys the run's documents
// filed before; look up near-duplicate candidates; save the documents with their verdicts
// and out-links, and file their keys. Each write is one statement for the run.
func saveRun(ctx context.Context, tx pgx.Tx, preps []docPrep, saves []DocumentSave, dups []*Dup, locks []int64) error {
	n := len(preps)
	crawls, hashes, contents := make([]string, n), make([][]byte, n), make([][]byte, n)
	for i, p := range preps {
		crawls[i], hashes[i], contents[i] = p.d.CrawlID, p.d.Hash, p.d.ContentHash
	}
	b := &pgx.Batch{}
	if locks != nil {
		b.Queue(nearIndexWholeSQL) // (near_index.go)
		b.Queue(`SELECT count(pg_advisory_xact_lock(k)) FROM (SELECT DISTINCT k FROM unnest($1::bigint[]) k ORDER BY k) x`, locks)
	}
	b.Queue(firstByContentSQL, crawls, hashes, contents)
	b.Queue(clearKeysSQL, crawls, hashes)
	var firsts []firstRow
	err := sendBatch(ctx, tx, b, func(br pgx.BatchResults) error {
		if locks != nil {
			var whole bool
			if err := br.QueryRow().Scan(&whole); err != nil {
				return fmt.Errorf("check the near-duplicate index: %w", err)
			}
			if !whole {
				return errNearIndexLost
			}
			if _, err := br.Exec(); err != nil {
				return fmt.Errorf("lock the documents and their crawls' near-duplicates: %w", err)
			}
		}
		rows, err := br.Query()
		if err != nil {
			return fmt.Errorf("find duplicates: %w", err)
		}
		if firsts, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (firstRow, error) {
			var f firstRow
			err := r.Scan(&f.hash, &f.at, &f.own)
			return f, err
		}); err != nil {
			return fmt.Errorf("find duplicates: %w", err)
		}
		if len(firsts) != n {
			return fmt.Errorf("find duplicates: %d answers for %d documents", len(firsts), n)
		}
		if _, err := br.Exec(); err != nil {
			return fmt.Errorf("clear near-duplicate keys: %w", err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if err := firstByContent(ctx, tx, preps, firsts, dups); err != nil {
		return err
	}
	// Exact duplicates are known; the others are looked up in one statement: the documents
	// filed before the run under their keys (the run's own keys were cleared above and are
	// filed with the run). The run's own documents are compared below, each with the run's
	// earlier ones that share a key.
	var near []int // documents looked up for near-duplicates, in order
	nk := 0        // their keys (each looked up, then filed)
	for i, p := range preps {
		if dups[i] == nil {
			nk += len(p.keys)
		}
	}
	qI, qC, qK, qH := make([]int32, 0, nk), make([]string, 0, nk), make([]int64, 0, nk), make([][]byte, 0, nk)
	qS, qB := make([]int64, 0, nk), make([]int32, 0, nk)
	for i, p := range preps {
		if dups[i] != nil || len(p.keys) == 0 {
			continue
		}
		near = append(near, i)
		for _, k := range p.keys {
			qI, qC, qK, qH = append(qI, int32(i)), append(qC, p.d.CrawlID), append(qK, k), append(qH, p.d.Hash)
			qS, qB = append(qS, *p.simhash), append(qB, p.bitsFor(k))
		}
	}
	filedBefore := map[int][]NearCandidate{}
	if len(near) > 0 {
		rows, err := tx.Query(ctx, nearCandidatesSQL, qI, qC, qK, qH, maxNearCandidates, qS, qB)
		if err != nil {
			return fmt.Errorf("near-duplicate candidates: %w", err)
		}
		for rows.Next() {
			var i int32
			var c NearCandidate
			if err := rows.Scan(&i, &c.Hash, &c.SimHash, &c.MinHash, &c.Original); err != nil {
				rows.Close()
				return fmt.Errorf("near-duplicate candidates: %w", err)
			}
			filedBefore[int(i)] = append(filedBefore[int(i)], c)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("near-duplicate candidates: %w", err)
		}
	}
	keyC, keyH, keyK, keyS := make([]string, 0, nk), make([][]byte, 0, nk), make([]int64, 0, nk), make([]int64, 0, nk)
	type crawlKey struct {
		crawl string
		key   int64
	}
	// The run's documents filed under a key so far, in filing order: a list a key, threaded
	// through one slice (a slice a key was most of what a save allocated).
	type filing struct{ doc, next int32 }
	filings := make([]filing, 0, nk)
	filed := make(map[crawlKey][2]int32, nk) // a key's first and last filing
	filedKeys := make([]*string, n)          // the keys each document files, for its row (nil: none)
	had := make([]int, n)                    // had[j] == i+1: document j is already among i's candidates
	for _, i := range near {
		p := preps[i]
		cands := filedBefore[i]
		for _, k := range p.keys {
			at, ok := filed[crawlKey{p.d.CrawlID, k}]
			bits := p.bitsFor(k)
			for e := at[0]; ok && e >= 0; e = filings[e].next {
				j := int(filings[e].doc)
				q := preps[j]
				if had[j] == i+1 || string(q.d.Hash) == string(p.d.Hash) || (dups[j] != nil && string(dups[j].Of) == string(p.d.Hash)) ||
					!nearEnough(*p.simhash, *q.simhash, bits) {
					continue
				}
				had[j] = i + 1
				cands = append(cands, NearCandidate{Hash: q.d.Hash, SimHash: *q.simhash, MinHash: q.minhash, Original: dups[j] == nil})
			}
		}
		dups[i] = saves[i].Near.Judge(cands)
		filedKeys[i] = keysLiteral(p.keys)
		for _, k := range p.keys {
			ck, e := crawlKey{p.d.CrawlID, k}, int32(len(filings))
			filings = append(filings, filing{doc: int32(i), next: -1})
			if at, ok := filed[ck]; ok {
				filings[at[1]].next, filed[ck] = e, [2]int32{at[0], e}
			} else {
				filed[ck] = [2]int32{e, e}
			}
			keyC, keyH, keyK, keyS = append(keyC, p.d.CrawlID), append(keyH, p.d.Hash), append(keyK, k), append(keyS, *p.simhash)
		}
	}
	// Save the documents with their verdicts (none, exact or near); queue those to deliver;
	// file the keys.
	bodies, texts, titles, langs, charsets, types, canonicals, signals := make([]string, n), make([]string, n), make([]string, n),
		make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	extracts := make([]string, n)
	sizes, simhashes := make([]int64, n), make([]*int64, n)
	noindex, nofollow := make([]bool, n), make([]bool, n)
	linksOut, textBytes := make([]int32, n), make([]int32, n)
	minhashes, dupOf := make([][]byte, n), make([][]byte, n)
	dupKind := make([]*string, n)
	dupScore := make([]*float64, n)
	var qCrawls, lKind []string
	var qHashes, lTo [][]byte
	var lDoc []int32
	var lNF []bool
	for i, p := range preps {
		d := p.d
		bodies[i], texts[i] = d.BodyKey, d.TextKey
		titles[i], langs[i], charsets[i], types[i], canonicals[i] = d.Title, d.Lang, d.Charset, d.ContentType, d.Canonical
		sizes[i], simhashes[i], minhashes[i] = d.Size, p.simhash, p.minhash
		noindex[i], nofollow[i], linksOut[i], textBytes[i] = d.NoIndex, d.NoFollow, int32(d.LinksOut), int32(d.TextBytes)
		signals[i], extracts[i] = d.RobotsSignal, string(d.Extract)
		if dup := dups[i]; dup != nil {
			dupOf[i], dupKind[i], dupScore[i] = dup.Of, &dup.Kind, &dup.Score
		}
		if d.Deliver {
			qCrawls, qHashes = append(qCrawls, d.CrawlID), append(qHashes, d.Hash)
		}
		for _, l := range outLinks(saves[i].Links) {
			lDoc, lTo = append(lDoc, int32(i+1)), append(lTo, l.To)
			lNF, lKind = append(lNF, l.NoFollow), append(lKind, cmp.Or(l.Kind, "a"))
		}
	}
	b = &pgx.Batch{}
	b.Queue(saveDocumentsSQL, crawls, hashes, contents, bodies, texts, titles, langs, charsets, types, sizes, canonicals,
		noindex, nofollow, linksOut, simhashes, minhashes, textBytes, signals, extracts, dupOf, dupKind, dupScore, filedKeys,
		lDoc, lTo, lKind, lNF)
	if len(qCrawls) > 0 {
		b.Queue(queueDeliveriesSQL, qCrawls, qHashes)
	}
	if len(keyK) > 0 {
		// (plain inserts: the index is not unique, schema 0039)
		b.Queue(`INSERT INTO dedup_keys (key, url_hash, simhash) SELECT `+nearKeySQL("c", "k")+`, h, s
			FROM unnest($1::text[], $2::bigint[], $3::bytea[], $4::bigint[]) AS t(c, k, h, s)`,
			keyC, keyK, keyH, keyS)
	}
	if err := tx.SendBatch(ctx, b).Close(); err != nil {
		return fmt.Errorf("save %d documents: %w", n, err)
	}
	return nil
}
