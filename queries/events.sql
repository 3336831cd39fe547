-- name: VenueCreate :one
INSERT INTO venues (name, city) VALUES (@name, @city) RETURNING id;

-- name: EventCreate :one
INSERT INTO events (venue_id, slug, name, starts_at, onsale_at)
VALUES (@venue_id, @slug, @name, @starts_at, @onsale_at)
RETURNING id;

-- name: EventBySlug :one
SELECT id FROM events WHERE slug = @slug;

-- name: PriceTierCreate :one
INSERT INTO price_tiers (event_id, name, price_cents) VALUES (@event_id, @name, @price_cents)
RETURNING id;

-- name: EventList :many
SELECT e.id, e.slug, e.name, e.starts_at, e.onsale_at, v.name AS venue
FROM events e
JOIN venues v ON v.id = e.venue_id
ORDER BY e.starts_at, e.id;

-- name: EventGet :one
SELECT e.id, e.slug, e.name, e.starts_at, e.onsale_at, v.name AS venue
FROM events e
JOIN venues v ON v.id = e.venue_id
WHERE e.id = @id;

-- name: EventIDsCurrent :many
-- Events whose holds may still need tidying: not long past.
SELECT id FROM events WHERE starts_at > now() - interval '2 days' ORDER BY id;
