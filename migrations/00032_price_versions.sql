-- +goose Up

-- An event's price configuration version: what booking keeps the configuration under
-- (its tax, fees, ticket types and their prices, read by priceConfig), so that a
-- basket's price reads one number instead of four tables. Every change to those
-- tables raises it in the changing transaction, by the triggers of
-- migrations/functions/price_versions.sql: a reader that sees the change sees the new
-- version with it. A version is the time of the change in microseconds (or one more
-- than the last, if that is later), never reused: a database made again from scratch
-- does not meet a version kept from the one before.
CREATE TABLE event_price_versions (
    event_id bigint PRIMARY KEY REFERENCES events (id),
    version  bigint NOT NULL
);
INSERT INTO event_price_versions (event_id, version)
SELECT id, (extract(epoch FROM clock_timestamp()) * 1000000)::bigint FROM events;

-- +goose Down
DROP TRIGGER IF EXISTS events_price_version ON events;
DROP TRIGGER IF EXISTS event_pricing_price_version ON event_pricing;
DROP TRIGGER IF EXISTS event_fees_price_version ON event_fees;
DROP TRIGGER IF EXISTS ticket_types_price_version ON ticket_types;
DROP TRIGGER IF EXISTS ticket_type_prices_price_version ON ticket_type_prices;
DROP FUNCTION IF EXISTS price_version_open();
DROP FUNCTION IF EXISTS price_version_changed();
DROP FUNCTION IF EXISTS price_version_bump(bigint);
DROP TABLE event_price_versions;
