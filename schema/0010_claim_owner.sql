-- Who holds a URL's claim: a host workflow's batch (run and batch number) or a fetch batch's
-- top-up (run and activity). The same owner claiming again — a local activity replayed after
-- a worker died, a retried fetch batch — gets its own claims back at once instead of leaving
-- them to expire with their lease.
ALTER TABLE urls ADD COLUMN claimed_by text;
