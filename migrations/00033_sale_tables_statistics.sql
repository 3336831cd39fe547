-- +goose Up

-- The tables the sale came to write since migration 00014 grow as its tables do, and
-- were analyzed at the default statistics target in autovacuum's passes: in make
-- onsale (log_autovacuum_min_duration = 0) idempotency_keys and order_lines took
-- 0.07-0.11 s of CPU each at nearly every pass (every 10 s), most of a pass's 0.2-0.3
-- s, and the holds of the seconds after the passes waited for the cores. They are
-- found by keys and ids too, so they get 00014's target of 10, as do the baskets' and
-- orders' other rows.
SELECT set_statistics('{idempotency_keys, order_lines, order_links, hold_ga_places, hold_seat_types,
                        hold_ga_types, hold_vouchers, voucher_redemptions, access_code_uses}', 10);

-- +goose Down
SELECT set_statistics('{idempotency_keys, order_lines, order_links, hold_ga_places, hold_seat_types,
                        hold_ga_types, hold_vouchers, voucher_redemptions, access_code_uses}', -1);
