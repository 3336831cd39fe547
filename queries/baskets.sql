-- The buyer's basket: one hold that grows and shrinks until its checkout begins. See
-- migrations/functions/hold_basket.sql for the steps and the answers' statuses.

-- name: BasketAddSeats :many
-- Adds exactly these seats to the buyer's hold (hold_id 0: their basket, opened if
-- they have none), all or nothing, in one call: hold_add_seats.
SELECT h.status::text AS status, coalesce(h.hold_id, 0)::bigint AS hold_id,
       coalesce(h.expires_at, 'epoch')::timestamptz AS expires_at, h.held::int AS held,
       coalesce(h.seat_id, 0)::bigint AS seat_id, coalesce(h.section, '')::text AS section,
       coalesce(h.row_label, '')::text AS row_label, coalesce(h.number, 0)::int AS number,
       coalesce(h.price_cents, 0)::int AS price_cents
FROM hold_add_seats(@event_id::bigint, @buyer::text, @hold_id::bigint, @seat_ids::bigint[],
                    @ttl_seconds::float8, @buyer_limit::int, @client_key::text, @client_limit::int,
                    @code_id::bigint) AS h;

-- name: BasketRemoveSeat :one
-- Frees one seat of the buyer's hold: hold_remove_seat.
SELECT r.status::text AS status, r.seat_count::int AS seat_count, r.ga_quantity::int AS ga_quantity
FROM hold_remove_seat(@event_id::bigint, @buyer::text, @hold_id::bigint, @seat_id::bigint) AS r;

-- name: BasketMerge :one
-- Moves hold from_id's seats and places into the buyer's hold into_id: hold_merge.
SELECT m.status::text AS status, coalesce(m.moved, '{}')::bigint[] AS moved
FROM hold_merge(@event_id::bigint, @buyer::text, @into_id::bigint, @from_id::bigint) AS m;

-- name: BasketOfBuyer :one
-- The buyer's basket on the event: their newest live hold that no order names yet.
SELECT h.id, h.expires_at, h.ga_tier_id, h.ga_quantity
FROM holds h
WHERE h.event_id = @event_id AND h.buyer = @buyer AND hold_is_live(h)
  AND NOT EXISTS (SELECT 1 FROM orders o WHERE o.event_id = h.event_id AND o.hold_id = h.id)
ORDER BY h.id DESC
LIMIT 1;
