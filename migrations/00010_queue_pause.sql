-- +goose Up

-- The control room's pause button (issue 8): admission stops while an event's room is
-- paused, and starts again at the same rate when resumed. In PostgreSQL with the rest
-- of the event's room settings, so that losing Redis does not lift a pause.
ALTER TABLE events ADD COLUMN queue_paused boolean NOT NULL DEFAULT false;

-- +goose Down
ALTER TABLE events DROP COLUMN queue_paused;
