-- +goose Up

-- A venue's IANA time zone (Europe/Berlin): every time of its events is shown and
-- typed in it, and stored in UTC as before. The program checks the name against the
-- tz database before storing it; the check here only keeps out what no IANA name
-- looks like. Existing venues keep showing UTC until staff choose their zone.
ALTER TABLE venues
    ADD COLUMN time_zone text NOT NULL DEFAULT 'UTC'
        CHECK (time_zone ~ '^[A-Za-z][A-Za-z0-9_+/-]{0,63}$');

-- +goose Down

ALTER TABLE venues DROP COLUMN time_zone;
