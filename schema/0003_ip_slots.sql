-- Per-IP politeness: many hosts can share one address (shared hosting). Each request books the
-- next start slot of its IP here, on top of its host's own spacing.
CREATE TABLE ip_slots (
    ip      inet PRIMARY KEY,
    next_at timestamptz NOT NULL
);
