-- Venue layouts (00007): what staff entered and the seats, price tiers and standing
-- areas it generated. Events copy them at creation (the Event*FromLayout statements)
-- and own their copies from then on.

-- name: VenueLayoutSet :exec
UPDATE venues SET layout = @layout WHERE id = @id;

-- name: VenueUpdate :exec
UPDATE venues SET name = @name, city = @city, time_zone = @time_zone WHERE id = @id;

-- name: VenueLayoutClear :exec
-- Drops a venue's generated layout before it is generated again; events keep their
-- own copies. VenueTiersClear follows, once no seat points at a tier.
DELETE FROM venue_seats WHERE venue_id = @venue_id;

-- name: VenueGAClear :exec
DELETE FROM venue_ga_areas WHERE venue_id = @venue_id;

-- name: VenueTiersClear :exec
DELETE FROM venue_price_tiers WHERE venue_id = @venue_id;

-- name: VenuePriceTierCreate :one
INSERT INTO venue_price_tiers (venue_id, name, price_cents) VALUES (@venue_id, @name, @price_cents)
RETURNING id;

-- name: VenueSeatsInsert :copyfrom
INSERT INTO venue_seats (venue_id, section, row_label, number, tier_id, rank, x, y, accessible, companion)
VALUES (@venue_id, @section, @row_label, @number, @tier_id, @rank, @x, @y, @accessible, @companion);

-- name: VenueGAAreaCreate :exec
INSERT INTO venue_ga_areas (venue_id, name, price_cents, capacity, stripes)
VALUES (@venue_id, @name, @price_cents, @capacity, @stripes);

-- name: VenueGet :one
SELECT id, name, city, time_zone, layout FROM venues WHERE id = @id;

-- name: VenueList :many
-- Every venue with the size of its layout and how many events it has.
SELECT v.id, v.name, v.city, v.time_zone,
       (SELECT count(*) FROM venue_seats s WHERE s.venue_id = v.id)::int AS seats,
       (SELECT coalesce(sum(g.capacity), 0) FROM venue_ga_areas g WHERE g.venue_id = v.id)::int AS standing,
       (SELECT count(*) FROM events e WHERE e.venue_id = v.id)::int AS events
FROM venues v
ORDER BY v.name, v.id;

-- name: EventTiersFromLayout :exec
-- The event's price tiers, copied from its venue's layout in the layout's order.
INSERT INTO price_tiers (event_id, name, price_cents)
SELECT @event_id::bigint, t.name, t.price_cents
FROM venue_price_tiers t
WHERE t.venue_id = @venue_id
ORDER BY t.id;

-- name: EventSeatsFromLayout :execrows
-- The event's own seats, copied from its venue's layout (after EventTiersFromLayout),
-- in the layout's order so that seat ids follow sections, rows and numbers.
INSERT INTO seats (event_id, section, row_label, number, price_tier_id, price_cents, rank, x, y, accessible, companion)
SELECT @event_id::bigint, s.section, s.row_label, s.number, p.id, t.price_cents, s.rank, s.x, s.y, s.accessible, s.companion
FROM venue_seats s
JOIN venue_price_tiers t ON t.venue_id = s.venue_id AND t.id = s.tier_id
JOIN price_tiers p ON p.event_id = @event_id::bigint AND p.name = t.name AND p.price_cents = t.price_cents
WHERE s.venue_id = @venue_id
ORDER BY s.id;

-- name: EventGATiersFromLayout :many
-- The event's standing tiers, copied from its venue's layout; their stripes follow
-- (GAStripesInit).
INSERT INTO ga_tiers (event_id, name, price_cents, capacity, stripes)
SELECT @event_id::bigint, g.name, g.price_cents, g.capacity, g.stripes
FROM venue_ga_areas g
WHERE g.venue_id = @venue_id
ORDER BY g.id
RETURNING id, capacity, stripes;

-- name: VenueGetForUpdate :one
-- The venue, locked: edits of one venue, and events created from it, take turns.
SELECT id, name, city, time_zone, layout FROM venues WHERE id = @id FOR UPDATE;

-- name: VenueTimeZones :many
-- The time zones the venues are in, each once: the staff's pages that span events
-- (the audit log) show times in the one zone when all venues share it.
SELECT DISTINCT time_zone FROM venues ORDER BY time_zone;
