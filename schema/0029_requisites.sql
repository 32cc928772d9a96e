-- A crawl's page requisites admitted free of its page budgets (the files a page names itself:
-- stylesheets, scripts, images…), counted apart from admitted (what maxPages judges) so that
-- the budgets hold for pages and the progress still counts every URL.
ALTER TABLE crawls ADD COLUMN IF NOT EXISTS requisites bigint NOT NULL DEFAULT 0;
