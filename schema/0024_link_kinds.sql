-- How a page links a URL: an anchor ('a', every link recorded before this column), a frame
-- or iframe source, a meta refresh target, rel=next/prev, an hreflang alternate, the canonical
-- link, a feed item. A constant default: adding the column rewrites no row.
ALTER TABLE links ADD COLUMN IF NOT EXISTS kind text NOT NULL DEFAULT 'a';
