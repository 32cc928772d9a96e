-- Page-level robots signals (X-Robots-Tag headers, <meta name="robots"> and the product token's
-- own meta) are recorded where they were found: a fetch keeps the header's directives that
-- apply to the crawler, and a document says which signal made it noindex or nofollow, so an
-- operator can see why a page's text or links are missing.
ALTER TABLE fetches ADD COLUMN robots_tag text;       -- e.g. 'noindex,nofollow' (robots.Directives)
ALTER TABLE documents ADD COLUMN robots_signal text;  -- e.g. 'x-robots-tag: noindex; meta: nofollow'
