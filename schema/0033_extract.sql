-- What a crawl's extraction rules (spec.extract) found on a document: per rule, its fields
-- (values capped where they are kept), JSON-LD objects, OpenGraph and meta tags.
ALTER TABLE documents ADD COLUMN IF NOT EXISTS extract jsonb;
