-- name: BuyerLock :exec
-- Serialises the holds of one buyer on one event for the rest of the transaction, so
-- that counting what the buyer has and adding to it cannot race, even for concurrent
-- requests of one session. A hash collision only serialises two buyers, never wrongly
-- admits one.
SELECT pg_advisory_xact_lock(hashtextextended(@buyer::text, @event_id::bigint));

-- name: ClientLock :exec
-- Serialises the holds made from one client network on one event, as BuyerLock does a
-- buyer's, so that the network's count (client_places) includes every earlier hold of
-- it, whatever its session. Taken before the buyer's lock, always: hold_seats_client
-- takes them in that order too.
SELECT pg_advisory_xact_lock(hashtextextended('client/' || @client_key::text, @event_id::bigint));

-- name: CodeLock :exec
-- Serialises the holds made under one access code (access_code_lock), so that the
-- code's count in HoldCreate includes every earlier hold under it. Taken after
-- ClientLock and before BuyerLock, the order of migrations/functions/presale.sql.
SELECT access_code_lock(@event_id::bigint, @code_id::bigint);

-- name: HoldCreate :one
-- Opens a hold if the event's sale is open (event_on_sale), the buyer stays within the
-- per-event limit (buyer_places) and the client network (client_key; empty: none)
-- within its limit of seats held at once (client_places, client_limit; 0: none). Run
-- after ClientLock and BuyerLock: the counts then include every earlier request of the
-- network and of the buyer. This is the verdict for best available and general
-- admission: their claims follow in the same transaction, whose now() is this
-- statement's, and nothing is claimed without the hold. It answers one row either way,
-- as hold_seats does: verdict 'held' with the hold (id, expires_at); or, with nothing
-- written (id 0), 'unknown' (no such event), 'not_on_sale' (expires_at: the onsale
-- time), 'closed', 'presale_quota' (expires_at: the onsale time), 'limit' (held:
-- what the buyer has) or 'client_limit' (held: what the network holds; expires_at:
-- when its first hold lapses). With an access code (code_id; 0: none), run after
-- CodeLock too: the code decides the window and its quota (hold_presale), and the
-- hold records the code it passed with.
WITH p AS (
    SELECT @event_id::bigint AS event_id, @buyer::text AS buyer, @seat_count::int AS seat_count,
           sqlc.narg(ga_tier_id)::bigint AS ga_tier_id, @ga_quantity::int AS ga_quantity,
           @ttl_seconds::float8 AS ttl_seconds, @buyer_limit::int AS buyer_limit,
           @client_key::text AS client_key, @client_limit::int AS client_limit, @code_id::bigint AS code_id
), v AS (
    SELECT p.event_id, p.buyer, p.seat_count, p.ga_tier_id, p.ga_quantity, p.client_key,
           e.onsale_at, coalesce(e.hold_minutes * 60, p.ttl_seconds) AS ttl, pre.code_id,
           b.held AS buyer_held, c.held AS client_held, coalesce(c.next_free, now()) AS next_free,
           CASE WHEN e.id IS NULL THEN 'unknown'
                WHEN pre.status <> 'on_sale' THEN pre.status
                WHEN b.held + p.seat_count + p.ga_quantity > p.buyer_limit THEN 'limit'
                WHEN c.held + p.seat_count + p.ga_quantity > p.client_limit THEN 'client_limit'
                ELSE 'held' END AS verdict
    FROM p
    LEFT JOIN events e ON e.id = p.event_id
    CROSS JOIN LATERAL hold_presale(p.event_id, event_sale_state(e), p.code_id,
                                    p.seat_count + p.ga_quantity, false) AS pre
    CROSS JOIN LATERAL buyer_places(p.event_id, p.buyer, 0) AS b(held)
    LEFT JOIN LATERAL (SELECT * FROM client_places(p.event_id, p.client_key)
                       WHERE p.client_key <> '' AND p.client_limit > 0) c ON true
), made AS (
    INSERT INTO holds (event_id, buyer, seat_count, ga_tier_id, ga_quantity, expires_at, client_key, access_code_id)
    SELECT v.event_id, v.buyer, v.seat_count, v.ga_tier_id, v.ga_quantity,
           now() + make_interval(secs => v.ttl), nullif(v.client_key, ''), v.code_id
    FROM v
    WHERE v.verdict = 'held'
    RETURNING id, expires_at
)
SELECT v.verdict::text AS verdict, coalesce(made.id, 0)::bigint AS id,
       (CASE v.verdict WHEN 'held' THEN made.expires_at WHEN 'not_on_sale' THEN v.onsale_at
                       WHEN 'presale_quota' THEN v.onsale_at
                       WHEN 'client_limit' THEN v.next_free ELSE 'epoch' END)::timestamptz AS expires_at,
       (CASE v.verdict WHEN 'client_limit' THEN v.client_held ELSE v.buyer_held END)::int AS held
FROM v LEFT JOIN made ON true;

-- name: BuyerPlaces :one
-- How many seats and GA places the buyer holds or owns on the event, apart from one hold.
SELECT buyer_places(@event_id::bigint, @buyer::text, @except_hold_id::bigint)::int;

-- name: BuyerWithinLimit :one
-- Whether the buyer may have asked more seats and places on the event without passing
-- buyer_limit, apart from one hold (except_hold_id): the sale's verdict on the limit,
-- run after BuyerLock; held is what buyer_places counts.
SELECT b.held::int AS held, (b.held + @asked::int <= @buyer_limit::int)::bool AS within
FROM buyer_places(@event_id::bigint, @buyer::text, @except_hold_id::bigint) AS b(held);

-- name: HoldGet :one
-- The hold row; live is hold_is_live (migrations/functions/hold_live.sql), the one
-- test of a hold in force: callers read it rather than the row's times.
SELECT id, event_id, buyer, seat_count, ga_tier_id, ga_quantity, expires_at, released_at, sold_at,
       hold_is_live(holds) AS live
FROM holds
WHERE event_id = @event_id AND id = @id;

-- name: HoldLock :one
-- The hold row, locked: checkout, release and confirm of one hold take turns on it.
SELECT id, event_id, buyer, seat_count, ga_tier_id, ga_quantity, expires_at, released_at, sold_at,
       hold_is_live(holds) AS live, access_code_id
FROM holds
WHERE event_id = @event_id AND id = @id
FOR UPDATE;

-- name: HoldSeatsHeld :one
-- How many of these seats the buyer's live hold holds. A batch of holds whose commit
-- went unanswered committed if and only if its hold has its seats: the hold row and
-- the claim are written in one transaction.
SELECT count(*)::int
FROM seats s JOIN holds h ON h.event_id = s.event_id AND h.id = s.held_by
WHERE s.event_id = @event_id AND s.held_by = @hold_id AND s.id = ANY(@seat_ids::bigint[])
  AND seat_is_held(s) AND h.buyer = @buyer AND h.released_at IS NULL;

-- name: HoldMarkReleased :execrows
UPDATE holds SET released_at = now()
WHERE event_id = @event_id AND id = @id AND released_at IS NULL AND sold_at IS NULL;

-- name: HoldsGALapsed :many
-- GA holds past their expiry whose places have not been given back, locked; holds busy
-- in another transaction (a confirm, say) are left for the next round.
SELECT id FROM holds
WHERE event_id = @event_id AND ga_quantity > 0 AND hold_lapsed(holds)
ORDER BY id
LIMIT @max_holds::int
FOR UPDATE SKIP LOCKED;

-- name: BestAvailableLock :exec
-- Best-available searches of one event take turns for the rest of their transaction,
-- a few at a time (turn is one of booking.bestTurns): buyers arriving together would
-- otherwise all compute the same best seats and spend their time losing them to each
-- other.
SELECT pg_advisory_xact_lock(hashtextextended('best-available/' || @turn::int, @event_id::bigint));

-- name: GAPlacesHeld :one
-- The event's GA places taken by holds neither released nor sold: they come back if
-- the hold lapses (a lapsed one's at the next tidy-up).
SELECT coalesce(sum(ga_quantity), 0)::int FROM holds
WHERE event_id = @event_id AND ga_quantity > 0 AND released_at IS NULL AND sold_at IS NULL;
