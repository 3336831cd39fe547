-- name: PaymentEventRecord :execrows
-- Records a provider event id in the transaction that acts on it. No row: this event
-- was acted on before (or is being acted on by a concurrent delivery, which this
-- statement waits for).
INSERT INTO payment_events (provider, event_id, type, order_id)
VALUES (@provider, @event_id, @type, @order_id)
ON CONFLICT (provider, event_id) DO NOTHING;
