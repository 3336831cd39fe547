-- +goose Up

-- How long a waiting room's admission lasts without a hold: an admitted visitor who has
-- held nothing by then loses the slot to the next in line (internal/waitroom). Whole
-- seconds, like queue_token_ttl_seconds; three minutes unless staff say otherwise.
ALTER TABLE events
    ADD COLUMN queue_idle_seconds integer NOT NULL DEFAULT 180 CHECK (queue_idle_seconds > 0);

-- +goose Down
ALTER TABLE events DROP COLUMN queue_idle_seconds;
