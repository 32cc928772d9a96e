-- The next request start each host may have, booked per request by whichever fetch activity
-- sends it: a retried activity and a stale attempt still running elsewhere share one schedule.
ALTER TABLE hosts ADD COLUMN next_request_at timestamptz;
