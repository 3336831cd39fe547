-- ticket_line: the line of an order that charged for one of its tickets, as the order's
-- lines fixed it at checkout, or NULL for an order made before orders were itemised. A
-- seat's ticket is its seat's line; a standing ticket is the n-th line of its tier, n its
-- place among the order's tickets of that tier by id (lines and tickets are both
-- written in that order).
CREATE OR REPLACE FUNCTION ticket_line(p_event_id bigint, p_order_id bigint, p_ticket_id bigint,
    p_seat_id bigint, p_ga_tier_id bigint) RETURNS int
LANGUAGE sql STABLE AS $$
    SELECT l.line FROM order_lines l
    WHERE l.event_id = p_event_id AND l.order_id = p_order_id AND l.kind = 'ticket'
      AND (l.seat_id = p_seat_id OR (p_seat_id IS NULL AND l.seat_id IS NULL AND l.ga_tier_id = p_ga_tier_id))
    ORDER BY l.line
    OFFSET CASE WHEN p_seat_id IS NOT NULL THEN 0 ELSE
        (SELECT count(*) FROM tickets t WHERE t.event_id = p_event_id AND t.order_id = p_order_id
           AND t.seat_id IS NULL AND t.ga_tier_id = p_ga_tier_id AND t.id < p_ticket_id) END
    LIMIT 1
$$;

-- ticket_paid_cents: what a ticket of an order cost (its line's total_cents: the type's
-- price, the per-ticket fees, less its discount), or NULL for an order made before
-- orders were itemised. A staff refund gives back this amount for each ticket it ends.
CREATE OR REPLACE FUNCTION ticket_paid_cents(p_event_id bigint, p_order_id bigint, p_ticket_id bigint,
    p_seat_id bigint, p_ga_tier_id bigint) RETURNS int
LANGUAGE sql STABLE AS $$
    SELECT l.total_cents FROM order_lines l
    WHERE l.event_id = p_event_id AND l.order_id = p_order_id
      AND l.line = ticket_line(p_event_id, p_order_id, p_ticket_id, p_seat_id, p_ga_tier_id)
$$;
