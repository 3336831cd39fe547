-- The box office's sales figures: per event and per day.
--
-- Sold tickets are the valid ones (a refunded or voided ticket is sold no more). The
-- revenue is what confirmed orders were charged, less what staff refunds gave back
-- (those not failed); a void gives nothing back, so it keeps its order's money. An
-- event's "today" starts at midnight on its venue's clocks.

-- name: EventSales :many
-- Every event's sales, soonest first.
-- Fees and tax are those of the confirmed orders' lines (both are parts of the
-- revenue) that were not given back: a refunded ticket gives back its line, and an
-- order whose every ticket was refunded its order fee too, as staff refunds do.
WITH ev AS (
    SELECT e.id, e.name, e.starts_at, v.time_zone,
           (date_trunc('day', now() AT TIME ZONE v.time_zone) AT TIME ZONE v.time_zone) AS today
    FROM events e JOIN venues v ON v.id = e.venue_id
), kept AS (
    SELECT l.event_id, sum(l.fee_cents) AS fee_cents, sum(l.tax_cents) AS tax_cents
    FROM order_lines l JOIN orders o ON o.id = l.order_id
    WHERE o.confirmed_at IS NOT NULL
      AND NOT EXISTS (SELECT 1 FROM tickets t
                      WHERE t.event_id = l.event_id AND t.order_id = l.order_id AND t.void_reason = 'refund'
                        AND CASE l.kind WHEN 'ticket' THEN ticket_line(t.event_id, t.order_id, t.id, t.seat_id, t.ga_tier_id) = l.line
                            ELSE NOT EXISTS (SELECT 1 FROM tickets v WHERE v.event_id = l.event_id AND v.order_id = l.order_id
                                               AND v.void_reason IS DISTINCT FROM 'refund') END)
    GROUP BY l.event_id
)
SELECT ev.id, ev.name, ev.time_zone, ev.starts_at,
    ((SELECT count(*) FROM seats s WHERE s.event_id = ev.id)
     + (SELECT coalesce(sum(g.capacity), 0) FROM ga_tiers g WHERE g.event_id = ev.id))::bigint AS capacity,
    (SELECT count(*) FROM tickets t WHERE t.event_id = ev.id AND t.voided_at IS NULL)::bigint AS tickets,
    (SELECT count(*) FROM tickets t WHERE t.event_id = ev.id AND t.voided_at IS NULL AND t.created_at >= ev.today)::bigint AS tickets_today,
    ((SELECT coalesce(sum(o.amount_cents), 0) FROM orders o WHERE o.event_id = ev.id AND o.confirmed_at IS NOT NULL)
     - (SELECT coalesce(sum(r.amount_cents), 0) FROM refunds r JOIN orders o ON o.id = r.order_id
        WHERE o.event_id = ev.id AND r.reason = 'staff_refund' AND r.state <> 'failed'))::bigint AS revenue_cents,
    ((SELECT coalesce(sum(o.amount_cents), 0) FROM orders o WHERE o.event_id = ev.id AND o.confirmed_at >= ev.today)
     - (SELECT coalesce(sum(r.amount_cents), 0) FROM refunds r JOIN orders o ON o.id = r.order_id
        WHERE o.event_id = ev.id AND r.reason = 'staff_refund' AND r.state <> 'failed' AND r.created_at >= ev.today))::bigint AS revenue_today_cents,
    coalesce(kept.fee_cents, 0)::bigint AS fee_cents, coalesce(kept.tax_cents, 0)::bigint AS tax_cents
FROM ev LEFT JOIN kept ON kept.event_id = ev.id
ORDER BY ev.starts_at, ev.id;

-- name: TicketsByDay :many
-- Valid tickets of the events @event_ids issued per day since @since, days on the
-- clocks of @zone: each day by the moment it starts. The events are named, as in every
-- statement on inventory, so that it reads by event.
SELECT (date_trunc('day', t.created_at AT TIME ZONE @zone::text) AT TIME ZONE @zone::text)::timestamptz AS day,
       count(*)::bigint AS tickets
FROM tickets t
WHERE t.event_id = ANY(@event_ids::bigint[]) AND t.created_at >= @since AND t.voided_at IS NULL
GROUP BY 1
ORDER BY 1;
