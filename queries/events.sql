-- name: VenueCreate :one
INSERT INTO venues (name, city, time_zone) VALUES (@name, @city, @time_zone) RETURNING id;

-- name: EventOnsaleReschedule :one
-- Moves an event's onsale to a later moment, as the demo seed does for the waiting
-- room's event at every start, but only while nobody has anything of it: its onsale
-- has passed, it has no order, and no hold that is neither released, sold nor lapsed.
-- No row: it was left as it was.
UPDATE events e SET onsale_at = @onsale_at
WHERE e.id = @id AND e.onsale_at <= now() AND @onsale_at::timestamptz < event_sales_close(e)
  AND NOT EXISTS (SELECT 1 FROM orders o WHERE o.event_id = e.id)
  AND NOT EXISTS (SELECT 1 FROM holds h
                  WHERE h.event_id = e.id AND hold_is_live(h))
RETURNING e.onsale_at;

-- name: EventBySlug :one
SELECT id FROM events WHERE slug = @slug;

-- name: EventList :many
-- The published events: the public pages' and the API's list.
SELECT e.id, e.slug, e.name, e.starts_at, e.onsale_at,
       event_sales_close(e) AS sales_close_at,
       e.queue_enabled, e.queue_slots, e.queue_rate, e.queue_token_ttl_seconds, e.queue_idle_seconds, e.verified_only, v.name AS venue, v.time_zone
FROM events e
JOIN venues v ON v.id = e.venue_id
WHERE e.published
ORDER BY e.starts_at, e.id;

-- name: EventGet :one
SELECT e.id, e.slug, e.name, e.starts_at, e.onsale_at,
       event_sales_close(e) AS sales_close_at,
       e.queue_enabled, e.queue_slots, e.queue_rate, e.queue_token_ttl_seconds, e.queue_idle_seconds, e.verified_only, v.name AS venue, v.time_zone
FROM events e
JOIN venues v ON v.id = e.venue_id
WHERE e.id = @id;

-- name: EventGetBySlug :one
-- EventGet by a page's address, in one round trip. An unpublished event has no public
-- address.
SELECT e.id, e.slug, e.name, e.starts_at, e.onsale_at,
       event_sales_close(e) AS sales_close_at,
       e.queue_enabled, e.queue_slots, e.queue_rate, e.queue_token_ttl_seconds, e.queue_idle_seconds, e.verified_only, v.name AS venue, v.time_zone
FROM events e
JOIN venues v ON v.id = e.venue_id
WHERE e.slug = @slug AND e.published;

-- name: EventsQueued :many
-- The events whose waiting room is on and whose sale is open, or opens within lead:
-- the admitter's work. Decided by the database clock.
SELECT e.id, e.slug, e.name, e.starts_at, e.onsale_at,
       event_sales_close(e) AS sales_close_at,
       e.queue_enabled, e.queue_slots, e.queue_rate, e.queue_token_ttl_seconds, e.queue_idle_seconds, e.verified_only, v.name AS venue, v.time_zone
FROM events e
JOIN venues v ON v.id = e.venue_id
WHERE e.queue_enabled AND e.published
  AND e.onsale_at <= now() + make_interval(secs => @lead_seconds::float8)
  AND now() < event_sales_close(e)
ORDER BY e.onsale_at, e.id;

-- name: EventSaleWindow :one
-- Where the database clock stands in the event's sales window. Read only after a
-- statement that carries the window refused, to say why; inside that statement's
-- transaction it sees the same now(). An unpublished event's sale is closed.
SELECT e.onsale_at, event_sale_state(e) AS state
FROM events e
WHERE e.id = @id;

-- name: EventIDsCurrent :many
-- Events whose holds may still need tidying: not long past.
SELECT id FROM events WHERE starts_at > now() - interval '2 days' ORDER BY id;

-- name: EventCreateFull :one
-- An event with every setting staff can give it (catalog.CreateEvent).
INSERT INTO events (venue_id, slug, name, starts_at, onsale_at, sales_close_at, hold_minutes, published,
                    queue_enabled, queue_slots, queue_rate, queue_token_ttl_seconds, queue_idle_seconds, verified_only)
VALUES (@venue_id, @slug, @name, @starts_at, @onsale_at, sqlc.narg(sales_close_at), sqlc.narg(hold_minutes), @published,
        @queue_enabled, @queue_slots, @queue_rate, @queue_token_ttl_seconds, @queue_idle_seconds, @verified_only)
RETURNING id;

-- name: EventUpdate :execrows
-- Changes an event's settings (not its venue: its inventory was copied at creation).
UPDATE events
SET name = @name, starts_at = @starts_at, onsale_at = @onsale_at, sales_close_at = sqlc.narg(sales_close_at),
    hold_minutes = sqlc.narg(hold_minutes), queue_enabled = @queue_enabled, queue_slots = @queue_slots,
    queue_rate = @queue_rate, queue_token_ttl_seconds = @queue_token_ttl_seconds,
    queue_idle_seconds = @queue_idle_seconds, verified_only = @verified_only,
    updated_at = now()
WHERE id = @id;

-- name: EventPublishSet :execrows
UPDATE events SET published = @published, updated_at = now() WHERE id = @id;

-- name: EventAdminGet :one
-- An event as staff edit it, published or not.
SELECT e.id, e.venue_id, v.name AS venue, v.time_zone, e.slug, e.name, e.starts_at, e.onsale_at, e.sales_close_at,
       e.hold_minutes, e.published, e.queue_enabled, e.queue_slots, e.queue_rate, e.queue_token_ttl_seconds,
       e.queue_idle_seconds, e.verified_only, e.updated_at,
       (SELECT count(*) FROM seats s WHERE s.event_id = e.id)::int AS seats
FROM events e
JOIN venues v ON v.id = e.venue_id
WHERE e.id = @id;

-- name: EventAdminGetForUpdate :one
-- EventAdminGet, the event row locked: edits of one event take turns.
SELECT e.id, e.venue_id, v.name AS venue, v.time_zone, e.slug, e.name, e.starts_at, e.onsale_at, e.sales_close_at,
       e.hold_minutes, e.published, e.queue_enabled, e.queue_slots, e.queue_rate, e.queue_token_ttl_seconds,
       e.queue_idle_seconds, e.verified_only, e.updated_at,
       (SELECT count(*) FROM seats s WHERE s.event_id = e.id)::int AS seats
FROM events e
JOIN venues v ON v.id = e.venue_id
WHERE e.id = @id
FOR UPDATE OF e;

-- name: EventAdminList :many
-- Every event, published or not, soonest first.
SELECT e.id, e.slug, e.name, e.starts_at, e.onsale_at,
       event_sales_close(e) AS sales_close_at,
       e.queue_enabled, e.published, v.name AS venue, v.time_zone
FROM events e
JOIN venues v ON v.id = e.venue_id
ORDER BY e.starts_at, e.id;
