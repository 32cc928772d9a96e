-- A host whose workflow's last claim found nothing due is waiting for a wake-up signal; one that
-- claimed URLs will claim again after its batch and needs none. Admission signals only waiting
-- hosts (the crawl's stale-host sweep covers a workflow that died while active).
ALTER TABLE hosts ADD COLUMN waiting boolean NOT NULL DEFAULT true;
