-- Presales: the access code a buyer enters, and the code a hold records. The window and
-- the quota are decided by the holding statements (migrations/functions/presale.sql).

-- name: AccessCodeCheck :one
-- An event's access code by the code a buyer typed, and whether its presale has ended
-- by the database clock.
SELECT id, code, presale_starts_at, presale_ends_at, quota, places_used, reveals_type_id, paused,
       (now() >= presale_ends_at)::bool AS ended
FROM access_codes WHERE event_id = @event_id AND code = @code;

-- name: HoldAccessCode :one
-- The access code a hold records (the presale it was made in, the type the code
-- reveals); no row: the hold records none, or is not the buyer's.
SELECT c.id, c.code, c.presale_starts_at, c.presale_ends_at, c.quota, c.places_used, c.reveals_type_id, c.paused
FROM holds h JOIN access_codes c ON c.event_id = h.event_id AND c.id = h.access_code_id
WHERE h.event_id = @event_id AND h.id = @hold_id AND h.buyer = @buyer;

-- name: AccessCodesPresale :many
-- The event's presale as its waiting room meters it: the codes that are not paused,
-- whose window has not ended by the database clock and begins before the public
-- onsale, with what their quotas have taken: the places bought (the larger of
-- places_used and the places of the sold holds that record the code, as hold_presale
-- compares) and the places of those holds bought or live (access_code_places).
SELECT c.id, c.presale_starts_at, c.presale_ends_at, c.quota,
       greatest(c.places_used,
                (SELECT coalesce(sum(h.seat_count + h.ga_quantity), 0)::int FROM holds h
                 WHERE h.event_id = c.event_id AND h.access_code_id = c.id AND h.sold_at IS NOT NULL))::int AS places_sold,
       access_code_places(c.event_id, c.id) AS places_held
FROM access_codes c JOIN events e ON e.id = c.event_id
WHERE c.event_id = @event_id AND NOT c.paused
  AND c.presale_ends_at > now() AND c.presale_starts_at < e.onsale_at
ORDER BY c.presale_starts_at, c.id;

-- name: EventsPresaleQueued :many
-- The events whose waiting room is on and whose presale room is the admitter's work:
-- before the public onsale, a code not paused whose window begins before the onsale
-- and within lead, and has not ended. Decided by the database clock.
SELECT e.id, e.slug, e.name, e.starts_at, e.onsale_at,
       event_sales_close(e) AS sales_close_at,
       e.queue_enabled, e.queue_slots, e.queue_rate, e.queue_token_ttl_seconds, e.queue_idle_seconds, e.verified_only, v.name AS venue, v.time_zone
FROM events e
JOIN venues v ON v.id = e.venue_id
WHERE e.queue_enabled AND e.published AND now() < e.onsale_at
  AND EXISTS (SELECT 1 FROM access_codes c
              WHERE c.event_id = e.id AND NOT c.paused AND c.presale_starts_at < e.onsale_at
                AND c.presale_starts_at <= now() + make_interval(secs => @lead_seconds::float8)
                AND c.presale_ends_at > now())
ORDER BY e.onsale_at, e.id;
