-- Sales at the box office: held (hold_seats), ordered (OrderCreate), paid on the spot
-- and confirmed (SeatSell), in one transaction. These are the parts only it has.

-- name: BoxOfficeSaleByToken :one
-- The order a sale form already made, if it was submitted before.
SELECT order_id FROM box_office_sales WHERE event_id = @event_id AND token = @token;

-- name: BoxOfficeSaleRecord :exec
INSERT INTO box_office_sales (event_id, token, order_id, staff_id, method, buyer_name)
VALUES (@event_id, @token, @order_id, @staff_id, @method, @buyer_name);

-- name: BoxOfficeSaleGet :one
SELECT b.method, b.buyer_name, b.created_at, coalesce(m.name, '')::text AS staff_name
FROM box_office_sales b LEFT JOIN staff m ON m.id = b.staff_id
WHERE b.event_id = @event_id AND b.order_id = @order_id;

-- name: PaymentAtBoxOffice :exec
-- The money taken at the window, cash or a card present: a payment that succeeded as it
-- was made, so that the order keeps exactly one charge like any other (state_reason
-- says how it was paid).
INSERT INTO payments (order_id, provider, idempotency_key, provider_payment_id, amount_cents, state, state_reason)
VALUES (@order_id, 'box_office', @idempotency_key, @provider_payment_id, @amount_cents, 'succeeded', @method);
