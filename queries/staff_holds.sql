-- Staff holds: house seats, press and kills, kept off sale by a member of staff. The
-- seats themselves are claimed by SeatHold (seats.sql) and freed by SeatRelease, the
-- conditional statements every hold uses; these are the hold rows around them.

-- name: StaffHoldCreate :one
-- Opens a staff hold until expires_at, which must be later than the database's now():
-- no row means it is not. No sales window and no per-buyer limit: staff keep seats off
-- sale before, during and after the onsale, as many as they need.
INSERT INTO holds (event_id, buyer, seat_count, expires_at, kind, reason, staff_id)
SELECT @event_id::bigint, @buyer::text, @seat_count::int, @expires_at::timestamptz,
       @kind::text, @reason::text, @staff_id::bigint
WHERE @expires_at::timestamptz > now()
RETURNING id, expires_at;

-- name: StaffHoldLock :one
-- A staff hold's row, locked: its release by hand and its lapse take turns on it. A
-- buyer's hold is not a staff hold and is not found.
SELECT id, kind, reason, staff_id, seat_count, expires_at, released_at, sold_at,
       hold_is_live(holds) AS live
FROM holds
WHERE event_id = @event_id AND id = @id AND kind <> 'buyer'
FOR UPDATE;

-- name: StaffHoldsOfEvent :many
-- The staff holds of an event still in force, one row per seat they keep, by hold.
-- A lapsed hold keeps nothing, whatever the tidy-up did.
SELECT h.id, h.kind, h.reason, h.expires_at, h.created_at, coalesce(m.name, '')::text AS staff_name,
       s.id AS seat_id, s.section, s.row_label, s.number, s.price_cents
FROM holds h
JOIN seats s ON s.event_id = h.event_id AND s.held_by = h.id AND seat_is_held(s)
LEFT JOIN staff m ON m.id = h.staff_id
WHERE h.event_id = @event_id AND h.kind <> 'buyer' AND hold_is_live(h)
ORDER BY h.id, s.id;
