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
