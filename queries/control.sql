-- name: ControlCounts :one
-- What the control room shows of one event, in one snapshot by the database clock.
SELECT
    (SELECT count(*) FROM seats s WHERE s.event_id = e.id)::bigint AS seats,
    (SELECT count(*) FROM seats s WHERE s.event_id = e.id AND s.sold_at IS NOT NULL)::bigint AS seats_sold,
    (SELECT count(*) FROM seats s WHERE s.event_id = e.id AND seat_is_held(s))::bigint AS seats_held,
    (SELECT coalesce(sum(g.capacity), 0) FROM ga_tiers g WHERE g.event_id = e.id)::bigint AS ga_capacity,
    (SELECT count(*) FROM tickets t WHERE t.event_id = e.id AND t.ga_tier_id IS NOT NULL AND t.voided_at IS NULL)::bigint AS ga_sold,
    (SELECT coalesce(sum(h.ga_quantity), 0) FROM holds h WHERE h.event_id = e.id AND h.ga_quantity > 0
        AND hold_is_live(h))::bigint AS ga_held,
    (SELECT count(*) FROM holds h WHERE h.event_id = e.id AND hold_is_live(h))::bigint AS live_holds,
    (SELECT count(*) FROM orders o WHERE o.event_id = e.id AND o.status = 'confirmed')::bigint AS orders_confirmed,
    (SELECT coalesce(sum(o.amount_cents), 0) FROM orders o WHERE o.event_id = e.id AND o.status = 'confirmed')::bigint AS revenue_cents,
    (SELECT count(*) FROM tickets t WHERE t.event_id = e.id AND t.created_at > now() - interval '1 minute')::bigint AS tickets_last_minute,
    e.queue_enabled, e.queue_paused, e.queue_slots, e.queue_rate, e.queue_idle_seconds
FROM events e
WHERE e.id = @event_id;

-- name: TicketsByMinute :many
-- Tickets issued per minute since @since, for the sales chart.
SELECT date_trunc('minute', t.created_at)::timestamptz AS minute, count(*)::bigint AS tickets
FROM tickets t
WHERE t.event_id = @event_id AND t.created_at >= @since
GROUP BY 1
ORDER BY 1;

-- name: EventSetQueuePaused :one
-- The room's pause set, with the settings before and after (for the audit log).
UPDATE events e SET queue_paused = @paused
FROM (SELECT p.id, p.queue_paused, p.queue_rate, p.queue_slots FROM events p WHERE p.id = @event_id FOR UPDATE) old
WHERE e.id = old.id
RETURNING old.queue_paused AS was_paused, old.queue_rate AS was_rate, old.queue_slots AS was_slots,
    e.queue_paused, e.queue_rate, e.queue_slots;

-- name: EventSetQueueRate :one
UPDATE events e SET queue_rate = @rate
FROM (SELECT p.id, p.queue_paused, p.queue_rate, p.queue_slots FROM events p WHERE p.id = @event_id FOR UPDATE) old
WHERE e.id = old.id
RETURNING old.queue_paused AS was_paused, old.queue_rate AS was_rate, old.queue_slots AS was_slots,
    e.queue_paused, e.queue_rate, e.queue_slots;

-- name: EventSetQueueSlots :one
-- How many shoppers the room admits at once, with the settings before and after.
UPDATE events e SET queue_slots = @slots
FROM (SELECT p.id, p.queue_paused, p.queue_rate, p.queue_slots FROM events p WHERE p.id = @event_id FOR UPDATE) old
WHERE e.id = old.id
RETURNING old.queue_paused AS was_paused, old.queue_rate AS was_rate, old.queue_slots AS was_slots,
    e.queue_paused, e.queue_rate, e.queue_slots;

-- name: EventsQueuePaused :many
SELECT id FROM events WHERE queue_paused;
