-- When a host's next queued URL is due: a fetch lease whose host ran dry asks every second or
-- so whether anything came in (Store.HostDue), which must not scan the host's queue.
CREATE INDEX urls_host_due ON urls (host, next_fetch_at) WHERE state = 'queued';
