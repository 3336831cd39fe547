-- The door: a ticket checks in once, by one conditional statement, however
-- many scanners race; every scan is logged.

-- name: TicketCheckIn :one
-- The check-in: the ticket of this code, of this event, valid and not yet in. No row:
-- one of these is not so (TicketByCode says which).
WITH t AS (
    UPDATE tickets
    SET checked_in_at = now(), checked_in_gate = @gate::text, checked_in_by = sqlc.narg(staff_id)::bigint
    WHERE code = @code AND event_id = @event_id AND voided_at IS NULL AND checked_in_at IS NULL
    RETURNING id, order_id, seat_id, ga_tier_id, checked_in_at
)
SELECT t.id, t.order_id, t.checked_in_at,
       coalesce(s.section, '') AS section, coalesce(s.row_label, '') AS row_label, coalesce(s.number, 0)::int AS number,
       coalesce(g.name, '') AS ga_tier_name
FROM t
LEFT JOIN seats s ON s.event_id = @event_id AND s.id = t.seat_id
LEFT JOIN ga_tiers g ON g.event_id = @event_id AND g.id = t.ga_tier_id;

-- name: TicketByCode :one
-- Why a check-in found nothing: the ticket of the code, whatever its event and state.
SELECT t.id, t.event_id, e.name AS event_name, t.voided_at, t.checked_in_at, t.checked_in_gate
FROM tickets t JOIN events e ON e.id = t.event_id
WHERE t.code = @code;

-- name: CheckinLog :exec
INSERT INTO checkins (event_id, staff_id, gate, code, ticket_id, result)
VALUES (@event_id, sqlc.narg(staff_id)::bigint, @gate, @code, sqlc.narg(ticket_id)::bigint, @result);

-- name: CheckinsExport :many
-- An event's scans for the CSV export, a page at a time by id.
SELECT c.id, c.at, c.gate, c.code, c.result, coalesce(st.name, '') AS staff_name, c.ticket_id,
       coalesce(t.order_id, 0)::bigint AS order_id
FROM checkins c
LEFT JOIN staff st ON st.id = c.staff_id
LEFT JOIN tickets t ON t.event_id = c.event_id AND t.id = c.ticket_id
WHERE c.event_id = @event_id AND c.id > @after_id
ORDER BY c.id
LIMIT @max_rows::int;

-- name: CheckinCounts :one
-- How many of the event's valid tickets are in.
SELECT count(*) FILTER (WHERE checked_in_at IS NOT NULL)::int AS checked_in, count(*)::int AS valid
FROM tickets WHERE event_id = @event_id AND voided_at IS NULL;
