-- name: GAStripesInit :exec
INSERT INTO ga_stripes (event_id, tier_id, stripe, remaining)
SELECT @event_id, @tier_id, unnest(@stripes::int[]), unnest(@remaining::int[]);

-- name: GATiers :many
SELECT t.id, t.name, t.price_cents, t.capacity,
       coalesce((SELECT sum(g.remaining) FROM ga_stripes g WHERE g.event_id = t.event_id AND g.tier_id = t.id), 0)::int AS remaining
FROM ga_tiers t
WHERE t.event_id = @event_id
ORDER BY t.price_cents DESC, t.id;

-- name: GATierGet :one
SELECT id, name, price_cents, capacity, stripes FROM ga_tiers
WHERE event_id = @event_id AND id = @id;

-- name: GATakeFromOne :one
-- Takes all the places from one stripe that has enough, trying the stripes from a
-- random start and skipping any another transaction is busy with. No row: no single
-- stripe could serve it right now (the caller then takes from several, waiting). Even
-- then it may have locked a stripe, one changed since its snapshot and found short on
-- the recheck, so the caller runs it in a savepoint and rolls that back (takeGA).
WITH pick AS (
    SELECT stripe FROM ga_stripes
    WHERE event_id = @event_id AND tier_id = @tier_id AND remaining >= @quantity::int
    ORDER BY (stripe + 64 - @start::int) % 64
    LIMIT 1
    FOR UPDATE SKIP LOCKED
)
UPDATE ga_stripes g
SET remaining = g.remaining - @quantity::int
FROM pick
WHERE g.event_id = @event_id AND g.tier_id = @tier_id AND g.stripe = pick.stripe
  AND g.remaining >= @quantity::int
RETURNING g.stripe;

-- name: GAStripesLock :many
-- All stripes of a tier, locked in stripe order (the one order every multi-stripe
-- statement uses).
SELECT stripe, remaining FROM ga_stripes
WHERE event_id = @event_id AND tier_id = @tier_id
ORDER BY stripe
FOR UPDATE;

-- name: GAStripeTake :execrows
UPDATE ga_stripes SET remaining = remaining - @quantity::int
WHERE event_id = @event_id AND tier_id = @tier_id AND stripe = @stripe AND remaining >= @quantity::int;

-- name: GAStripeGive :exec
UPDATE ga_stripes SET remaining = remaining + @quantity::int
WHERE event_id = @event_id AND tier_id = @tier_id AND stripe = @stripe;

-- name: HoldGAPlaceAdd :exec
INSERT INTO hold_ga_places (event_id, hold_id, tier_id, stripe, quantity)
VALUES (@event_id, @hold_id, @tier_id, @stripe, @quantity)
ON CONFLICT (event_id, hold_id, tier_id, stripe)
DO UPDATE SET quantity = hold_ga_places.quantity + EXCLUDED.quantity;

-- name: HoldGAPlaces :many
SELECT tier_id, stripe, quantity FROM hold_ga_places
WHERE event_id = @event_id AND hold_id = @hold_id
ORDER BY tier_id, stripe;

-- name: HoldGAPlacesClear :exec
DELETE FROM hold_ga_places WHERE event_id = @event_id AND hold_id = @hold_id;
