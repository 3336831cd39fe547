-- Vouchers and access codes: the staff's list, and the conditional statements that
-- count their use at confirmation.

-- name: VoucherCreate :one
INSERT INTO vouchers (event_id, code, amount_off_cents, percent_off_bp, type_ids, usage_limit, valid_from, valid_until)
VALUES (@event_id, @code, sqlc.narg('amount_off_cents'), sqlc.narg('percent_off_bp'), @type_ids::bigint[],
    sqlc.narg('usage_limit'), sqlc.narg('valid_from'), sqlc.narg('valid_until'))
ON CONFLICT (event_id, code) DO NOTHING
RETURNING id;

-- name: VoucherList :many
SELECT id, code, amount_off_cents, percent_off_bp, type_ids, usage_limit, used, valid_from, valid_until, paused, created_at
FROM vouchers WHERE event_id = @event_id ORDER BY code;

-- name: VoucherByCode :one
SELECT id, code, amount_off_cents, percent_off_bp, type_ids, usage_limit, used, valid_from, valid_until, paused, created_at
FROM vouchers WHERE event_id = @event_id AND code = @code;

-- name: VoucherSetPaused :execrows
UPDATE vouchers SET paused = @paused WHERE event_id = @event_id AND id = @id;

-- name: VoucherRedeem :execrows
-- Redeems voucher @voucher_id for order @order_id if it is not paused, valid now by
-- the database clock, and used fewer times than its limit: one statement, whose
-- affected rows (1 or 0) are the verdict. Buyers racing for the last use queue on the
-- voucher's row; each re-reads used after the one before commits, so no more than
-- usage_limit ever succeed. An order redeems once: a second call for it (a repeated
-- confirmation) changes nothing and answers 0, and the caller reads the redemption.
WITH v AS (
    UPDATE vouchers SET used = used + 1
    WHERE vouchers.event_id = @event_id AND id = @voucher_id AND NOT paused
      AND (usage_limit IS NULL OR used < usage_limit)
      AND (valid_from IS NULL OR valid_from <= now())
      AND (valid_until IS NULL OR valid_until > now())
      AND NOT EXISTS (SELECT 1 FROM voucher_redemptions r WHERE r.order_id = @order_id)
    RETURNING event_id, id
)
INSERT INTO voucher_redemptions (event_id, order_id, voucher_id, discount_cents)
SELECT v.event_id, @order_id, v.id, @discount_cents FROM v;

-- name: VoucherRedemptionGet :one
SELECT r.voucher_id, v.code, r.discount_cents, r.redeemed_at
FROM voucher_redemptions r JOIN vouchers v ON v.event_id = r.event_id AND v.id = r.voucher_id
WHERE r.event_id = @event_id AND r.order_id = @order_id;

-- name: AccessCodeCreate :one
INSERT INTO access_codes (event_id, code, presale_starts_at, presale_ends_at, quota, reveals_type_id)
VALUES (@event_id, @code, @presale_starts_at, @presale_ends_at, sqlc.narg('quota'), sqlc.narg('reveals_type_id'))
ON CONFLICT (event_id, code) DO NOTHING
RETURNING id;

-- name: AccessCodeList :many
SELECT c.id, c.code, c.presale_starts_at, c.presale_ends_at, c.quota, c.places_used, c.reveals_type_id,
    coalesce(t.name, '')::text AS reveals_type, c.paused, c.created_at
FROM access_codes c LEFT JOIN ticket_types t ON t.event_id = c.event_id AND t.id = c.reveals_type_id
WHERE c.event_id = @event_id ORDER BY c.code;

-- name: AccessCodeByCode :one
SELECT id, code, presale_starts_at, presale_ends_at, quota, places_used, reveals_type_id, paused
FROM access_codes WHERE event_id = @event_id AND code = @code;

-- name: AccessCodeSetPaused :execrows
UPDATE access_codes SET paused = @paused WHERE event_id = @event_id AND id = @id;

-- name: AccessCodeUse :execrows
-- Takes @places of an access code's quota for order @order_id, at its confirmation, if
-- it is not paused and the places fit: like VoucherRedeem, the affected rows are the
-- verdict.
WITH c AS (
    UPDATE access_codes SET places_used = places_used + @places::integer
    WHERE access_codes.event_id = @event_id AND id = @code_id AND NOT paused
      AND (quota IS NULL OR places_used + @places::integer <= quota)
      AND NOT EXISTS (SELECT 1 FROM access_code_uses u WHERE u.order_id = @order_id)
    RETURNING event_id, id
)
INSERT INTO access_code_uses (event_id, order_id, code_id, places)
SELECT c.event_id, @order_id, c.id, @places::integer FROM c;

-- name: HoldVoucherSet :exec
INSERT INTO hold_vouchers (event_id, hold_id, voucher_id) VALUES (@event_id, @hold_id, @voucher_id)
ON CONFLICT (event_id, hold_id) DO UPDATE SET voucher_id = EXCLUDED.voucher_id;

-- name: HoldVoucherClear :exec
DELETE FROM hold_vouchers WHERE event_id = @event_id AND hold_id = @hold_id;

-- name: VoucherRedemptionRelease :execrows
-- Gives an order's voucher use back: the order sold nothing and charged nothing (it
-- expired unpaid), so the use it counted may go to another buyer. One statement: the
-- redemption row removed and the counter lowered together, or neither.
WITH r AS (
    DELETE FROM voucher_redemptions WHERE voucher_redemptions.event_id = @event_id AND order_id = @order_id
    RETURNING event_id, voucher_id
)
UPDATE vouchers v SET used = v.used - 1 FROM r WHERE v.event_id = r.event_id AND v.id = r.voucher_id;

-- name: AccessCodeUseGet :one
-- The access code order @order_id's places were counted against, and how many.
SELECT c.code, u.places
FROM access_code_uses u JOIN access_codes c ON c.event_id = u.event_id AND c.id = u.code_id
WHERE u.event_id = @event_id AND u.order_id = @order_id;
