-- name: TicketsIssueForSeats :execrows
-- One ticket per seat sold to the order, each with an unguessable code (122 random bits
-- from the server's strong random source).
INSERT INTO tickets (event_id, order_id, seat_id, code)
SELECT @event_id, @order_id, s.id, replace(gen_random_uuid()::text, '-', '')
FROM seats s
WHERE s.event_id = @event_id AND s.order_id = @order_id
ORDER BY s.id;

-- name: TicketsIssueForGA :execrows
INSERT INTO tickets (event_id, order_id, ga_tier_id, code)
SELECT @event_id, @order_id, @ga_tier_id::bigint, replace(gen_random_uuid()::text, '-', '')
FROM generate_series(1, @quantity::int);
