-- A crawl's state or spec changing (pause, resume, stop, block, a new deny list) is told to
-- every listening worker at commit: fetch leases read their URLs' states once per window of
-- requests, not once per request, and a control tells them to read again at once.
CREATE FUNCTION crawls_notify_control() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('trawler_control', NEW.id);
    RETURN NULL;
END
$$;

CREATE TRIGGER crawls_control AFTER UPDATE ON crawls FOR EACH ROW
    WHEN (OLD.state IS DISTINCT FROM NEW.state OR OLD.spec IS DISTINCT FROM NEW.spec)
    EXECUTE FUNCTION crawls_notify_control();
