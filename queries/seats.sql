-- name: SeatHold :many
-- Claims exactly these seats for a hold. The caller compares the rows returned with the
-- seats asked for and rolls back on a shortfall (all or nothing). Free seats are locked
-- in id order first, so overlapping multi-seat holds queue instead of deadlocking; the
-- freedom test is repeated on the locked row, which is the verdict.
-- The ids are read through a sub-select, as in SeatSell: see there why.
WITH target AS (
    SELECT id FROM seats
    WHERE event_id = @event_id AND id = ANY((SELECT @seat_ids::bigint[])::bigint[])
      AND seat_is_free(seats)
    ORDER BY id
    FOR UPDATE
)
UPDATE seats s
SET held_by = @hold_id, hold_expires_at = @expires_at
FROM target
WHERE s.event_id = @event_id AND s.id = target.id
  AND seat_is_free(s)
RETURNING s.id, s.section, s.row_label, s.number, s.price_cents;

-- name: SeatClaimUnlocked :many
-- Best available's claim: all of these seats or none, in one statement. Seats another
-- transaction is busy with are skipped rather than waited for; if any had to be skipped
-- (or is no longer free), nothing is claimed and the caller tries its next choice.
-- The ids are read through a sub-select, as in SeatSell: see there why.
WITH target AS (
    SELECT id FROM seats
    WHERE event_id = @event_id AND id = ANY((SELECT @seat_ids::bigint[])::bigint[])
      AND seat_is_free(seats)
    ORDER BY id
    FOR UPDATE SKIP LOCKED
), complete AS (
    SELECT count(*) = cardinality(@seat_ids::bigint[]) AS ok FROM target
)
UPDATE seats s
SET held_by = @hold_id, hold_expires_at = @expires_at
FROM target, complete
WHERE complete.ok AND s.event_id = @event_id AND s.id = target.id
RETURNING s.id, s.section, s.row_label, s.number, s.price_cents;

-- name: SeatBestRows :many
-- The free seats of the few rows best worth a look for best available, at a price from
-- @min_price to @max_price (one price level, or every price): the rows nearest the
-- stage first. The map's y grows away from the stage and a farther row's seats all lie
-- below a nearer row's (curved rows too), so the rows of the first free seats by y are
-- the nearest rows with a free seat. They are found through the index of untouched free
-- seats by y (plus seats whose hold has lapsed but not been tidied), so however many
-- seats are held or sold the search costs the same. Each seat comes with its row's
-- place: its depth (the row's largest y), twice its middle's x, and, for a row without
-- width on the map (a map without coordinates), the sum of its first and last seat
-- numbers (0 for any other row), so that a block's distance from the row's centre can
-- be measured. Only free seats come back: the
-- picking needs runs of consecutive numbers, which a taken seat breaks as well by
-- being absent.
WITH free AS (
    (SELECT f.section, f.row_label, f.y, f.id FROM seats f
     WHERE f.event_id = @event_id AND f.held_by IS NULL AND f.sold_at IS NULL
       AND f.price_cents BETWEEN @min_price::int AND @max_price::int
     ORDER BY f.y, f.price_cents, f.id
     LIMIT @seat_limit::int)
    UNION ALL
    (SELECT l.section, l.row_label, l.y, l.id FROM seats l
     WHERE l.event_id = @event_id AND seat_hold_lapsed(l)
       AND l.price_cents BETWEEN @min_price::int AND @max_price::int
     ORDER BY l.hold_expires_at
     LIMIT @seat_limit::int)
), candidate AS (
    SELECT free.section, free.row_label, min(free.y) AS near, min(free.id) AS first_id
    FROM free
    GROUP BY free.section, free.row_label
    ORDER BY near, first_id
    LIMIT @row_limit::int
), row_seats AS (
    SELECT c.near, c.first_id, s.id, s.section, s.row_label, s.number, s.price_cents, s.rank, s.x,
           seat_is_free(s) AS free,
           max(s.y) OVER w AS row_depth,
           min(s.x) OVER w + max(s.x) OVER w AS row_mid2,
           CASE WHEN min(s.x) OVER w = max(s.x) OVER w THEN min(s.number) OVER w + max(s.number) OVER w
                ELSE 0 END AS row_flat_mid2
    FROM candidate c
    JOIN seats s ON s.event_id = @event_id AND s.section = c.section AND s.row_label = c.row_label
    WINDOW w AS (PARTITION BY s.section, s.row_label)
)
SELECT r.id, r.section, r.row_label, r.number, r.price_cents, r.rank, r.x,
       r.row_depth::int AS row_depth, r.row_mid2::int AS row_mid2, r.row_flat_mid2::int AS row_flat_mid2, r.free
FROM row_seats r
WHERE r.free AND r.price_cents BETWEEN @min_price::int AND @max_price::int
ORDER BY r.near, r.first_id, r.number;

-- name: SeatBestRowsInSection :many
-- SeatBestRows within one section.
WITH free AS (
    (SELECT f.section, f.row_label, f.y, f.id FROM seats f
     WHERE f.event_id = @event_id AND f.section = @section AND f.held_by IS NULL AND f.sold_at IS NULL
       AND f.price_cents BETWEEN @min_price::int AND @max_price::int
     ORDER BY f.y, f.price_cents, f.id
     LIMIT @seat_limit::int)
    UNION ALL
    (SELECT l.section, l.row_label, l.y, l.id FROM seats l
     WHERE l.event_id = @event_id AND seat_hold_lapsed(l) AND l.section = @section
       AND l.price_cents BETWEEN @min_price::int AND @max_price::int
     ORDER BY l.hold_expires_at
     LIMIT @seat_limit::int)
), candidate AS (
    SELECT free.section, free.row_label, min(free.y) AS near, min(free.id) AS first_id
    FROM free
    GROUP BY free.section, free.row_label
    ORDER BY near, first_id
    LIMIT @row_limit::int
), row_seats AS (
    SELECT c.near, c.first_id, s.id, s.section, s.row_label, s.number, s.price_cents, s.rank, s.x,
           seat_is_free(s) AS free,
           max(s.y) OVER w AS row_depth,
           min(s.x) OVER w + max(s.x) OVER w AS row_mid2,
           CASE WHEN min(s.x) OVER w = max(s.x) OVER w THEN min(s.number) OVER w + max(s.number) OVER w
                ELSE 0 END AS row_flat_mid2
    FROM candidate c
    JOIN seats s ON s.event_id = @event_id AND s.section = c.section AND s.row_label = c.row_label
    WINDOW w AS (PARTITION BY s.section, s.row_label)
)
SELECT r.id, r.section, r.row_label, r.number, r.price_cents, r.rank, r.x,
       r.row_depth::int AS row_depth, r.row_mid2::int AS row_mid2, r.row_flat_mid2::int AS row_flat_mid2, r.free
FROM row_seats r
WHERE r.free AND r.price_cents BETWEEN @min_price::int AND @max_price::int
ORDER BY r.near, r.first_id, r.number;

-- name: SeatRelease :many
-- Frees the seats of a hold at once.
UPDATE seats
SET held_by = NULL, hold_expires_at = NULL
WHERE event_id = @event_id AND held_by = @hold_id AND sold_at IS NULL
RETURNING id;

-- name: SeatsOfHold :many
-- The seats a hold still has: none once it lapsed, whatever the tidy-up did.
SELECT id, section, row_label, number, price_cents
FROM seats
WHERE event_id = @event_id AND held_by = @hold_id AND seat_is_held(seats)
ORDER BY id;

-- name: SeatsByIDs :many
SELECT id, section, row_label, number, price_cents
FROM seats
WHERE event_id = @event_id AND id = ANY(@seat_ids::bigint[])
ORDER BY id;

-- name: SeatSell :many
-- Sells an order's seats, idempotent on the order: a seat already sold to this order
-- stays sold to it; a seat still held by the order's hold, or free again after that hold
-- lapsed, is claimed in this same statement; a seat anyone else holds or owns is not.
-- The caller compares the rows with the order's seats and sells nothing on a shortfall.
--
-- The ids are read through a sub-select so that the plan does not depend on how many
-- there are. Written as id = ANY(@seat_ids), a plan made for the ids at hand (PostgreSQL's
-- custom plan) counts them and comes out cheaper than the plan for any ids (the generic
-- plan, which assumes ten), so the prepared statement would be planned anew at every
-- call: 0.5 ms of planning for 0.5 ms of work, in make onsale 5.7 s of the database's
-- time for this statement and 3.9 s for SeatClaimUnlocked (pg_stat_statements with
-- track_planning). Behind the sub-select neither plan knows the count, the generic
-- plan is kept from the sixth call on, and both are the same index scan
-- (TestSeatClaimsKeepTheirPlan).
WITH target AS (
    SELECT id FROM seats
    WHERE event_id = @event_id AND id = ANY((SELECT @seat_ids::bigint[])::bigint[])
    ORDER BY id
    FOR UPDATE
)
UPDATE seats s
SET sold_at = coalesce(s.sold_at, now()), order_id = @order_id, held_by = NULL, hold_expires_at = NULL
FROM target
WHERE s.event_id = @event_id AND s.id = target.id
  AND (s.order_id = @order_id OR s.held_by = @hold_id OR seat_is_free(s))
RETURNING s.id;

-- name: SeatTidyLapsed :many
-- Clears lapsed holds so the seat map and best available see them as free. Nothing
-- depends on it for correctness: every claim already treats a lapsed hold as free.
-- Seats another transaction is working on are skipped, never waited for.
WITH lapsed AS (
    SELECT id FROM seats
    WHERE event_id = @event_id AND seat_hold_lapsed(seats)
    ORDER BY id
    LIMIT @max_seats::int
    FOR UPDATE SKIP LOCKED
)
UPDATE seats s
SET held_by = NULL, hold_expires_at = NULL
FROM lapsed
WHERE s.event_id = @event_id AND s.id = lapsed.id AND seat_hold_lapsed(s)
RETURNING s.id;

-- name: SeatMap :many
-- The whole map of one event, statuses decided by the database clock.
SELECT id, section, row_label, number, price_cents, rank, x, y, accessible,
       seat_status(seats)::text AS status
FROM seats
WHERE event_id = @event_id
ORDER BY section, row_label, number;

-- name: SeatStatuses :one
-- Every seat's status and the GA places left, in one row for the drift check
-- (mapdrift.go), which compares them with the cached map each second: the ids, and at
-- the same places in statuses the first letter of each seat's status (seat_status, as
-- SeatMap shows it). Both aggregates take the seats in one pass, in the same order;
-- no order is asked for, since none is needed. The GA places left are counted as
-- GATiers counts them, the tiers read once (a CTE named twice is materialised).
WITH ga AS (
    SELECT coalesce(array_agg(t.id ORDER BY t.id), '{}')::bigint[] AS tier_ids,
           coalesce(array_agg(coalesce((SELECT sum(g.remaining) FROM ga_stripes g
                                        WHERE g.event_id = t.event_id AND g.tier_id = t.id), 0)::int
                              ORDER BY t.id), '{}')::int[] AS remaining
    FROM ga_tiers t
    WHERE t.event_id = @event_id
)
SELECT coalesce(array_agg(s.id), '{}')::bigint[] AS ids,
       coalesce(string_agg(left(seat_status(s), 1), ''), '')::text AS statuses,
       (SELECT ga.tier_ids FROM ga)::bigint[] AS ga_tier_ids,
       (SELECT ga.remaining FROM ga)::int[] AS ga_remaining
FROM seats s
WHERE s.event_id = @event_id;

-- name: SeatMapByIDs :many
-- Some seats of the map, as SeatMap shows them: what a live map re-reads when the feed
-- names seats that changed.
SELECT id, section, row_label, number, price_cents, rank, x, y, accessible,
       seat_status(seats)::text AS status
FROM seats
WHERE event_id = @event_id AND id = ANY(@seat_ids::bigint[]);

-- name: SeatsHoldExact :many
-- Holds exactly these seats for the buyer in one round trip, the client network within
-- its limit: see migrations/functions/hold_seats.sql and hold_seats_client.sql for the
-- steps and the answer's statuses. With join_basket, a buyer who has a basket on the
-- event gets 'basket' instead, with nothing held.
SELECT h.status::text AS status, coalesce(h.hold_id, 0)::bigint AS hold_id,
       coalesce(h.expires_at, 'epoch')::timestamptz AS expires_at, h.held::int AS held,
       coalesce(h.seat_id, 0)::bigint AS seat_id, coalesce(h.section, '')::text AS section,
       coalesce(h.row_label, '')::text AS row_label, coalesce(h.number, 0)::int AS number,
       coalesce(h.price_cents, 0)::int AS price_cents
FROM hold_seats_client(@event_id::bigint, @buyer::text, @seat_ids::bigint[], @ttl_seconds::float8, @buyer_limit::int,
                       @client_key::text, @client_limit::int, true, @code_id::bigint, @join_basket::boolean) AS h;

-- name: SeatsHoldExactBatch :batchmany
-- SeatsHoldExact for several buyers in one round trip, inside one transaction the
-- caller opens: one commit for many holds. A network busy in another transaction is
-- not waited for: that hold answers 'busy', to be run again on its own.
SELECT h.status::text AS status, coalesce(h.hold_id, 0)::bigint AS hold_id,
       coalesce(h.expires_at, 'epoch')::timestamptz AS expires_at, h.held::int AS held,
       coalesce(h.seat_id, 0)::bigint AS seat_id, coalesce(h.section, '')::text AS section,
       coalesce(h.row_label, '')::text AS row_label, coalesce(h.number, 0)::int AS number,
       coalesce(h.price_cents, 0)::int AS price_cents
FROM hold_seats_client(@event_id::bigint, @buyer::text, @seat_ids::bigint[], @ttl_seconds::float8, @buyer_limit::int,
                       @client_key::text, @client_limit::int, false, @code_id::bigint, @join_basket::boolean) AS h;
