package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// SetCookie is one Set-Cookie header a host sent, as sent, with the URL and time it came with:
// what a jar is rebuilt from (a Max-Age counts from At).
type SetCookie struct {
	URL  string    `json:"u"`
	Line string    `json:"l"`
	At   time.Time `json:"t"`
}

// CookieJar is the Set-Cookie headers a crawl's host has sent, oldest first (none: an empty jar).
func (agg Hosts) CookieJar(ctx context.Context, crawlID, host string) ([]SetCookie, error) {
	s := agg.s
	var raw []byte
	err := s.pool.QueryRow(ctx, `SELECT cookies FROM cookie_jars WHERE crawl_id = $1 AND host = $2`, crawlID, host).Scan(&raw)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("store: cookie jar of %s in %s: %w", host, crawlID, err)
	}
	var out []SetCookie
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, fmt.Errorf("store: cookie jar of %s in %s: %w", host, crawlID, err)
	}
	return out, nil
}

// SaveCookies replaces a crawl's host's jar with cookies (the caller caps them).
func (agg Hosts) SaveCookies(ctx context.Context, crawlID, host string, cookies []SetCookie) error {
	s := agg.s
	raw, err := json.Marshal(cookies)
	if err != nil {
		return err
	}
	if _, err := s.pool.Exec(ctx, `INSERT INTO cookie_jars (crawl_id, host, cookies) VALUES ($1, $2, $3)
		ON CONFLICT (crawl_id, host) DO UPDATE SET cookies = $3, updated_at = now()`, crawlID, host, raw); err != nil {
		return fmt.Errorf("store: save the cookies of %s in %s: %w", host, crawlID, err)
	}
	return nil
}
