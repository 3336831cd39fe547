-- An event's price configuration (internal/pricing's Config), and the staff's changes
-- to it. Every statement names its event.

-- name: PricingGet :one
-- The event's tax, and the version of its price configuration (event_price_versions; 0:
-- none) as this statement sees it: read first, what follows is at least that new.
SELECT e.id, coalesce(p.tax_rate_bp, 0)::integer AS tax_rate_bp, coalesce(p.tax_label, 'VAT')::text AS tax_label,
       coalesce(v.version, 0)::bigint AS version
FROM events e
LEFT JOIN event_pricing p ON p.event_id = e.id
LEFT JOIN event_price_versions v ON v.event_id = e.id
WHERE e.id = @event_id;

-- name: PricingSetTax :exec
INSERT INTO event_pricing (event_id, tax_rate_bp, tax_label) VALUES (@event_id, @tax_rate_bp, @tax_label)
ON CONFLICT (event_id) DO UPDATE SET tax_rate_bp = EXCLUDED.tax_rate_bp, tax_label = EXCLUDED.tax_label, updated_at = now();

-- name: FeeList :many
SELECT method, per_ticket_cents, per_order_cents FROM event_fees WHERE event_id = @event_id ORDER BY method;

-- name: FeeSet :exec
INSERT INTO event_fees (event_id, method, per_ticket_cents, per_order_cents)
VALUES (@event_id, @method, @per_ticket_cents, @per_order_cents)
ON CONFLICT (event_id, method) DO UPDATE
SET per_ticket_cents = EXCLUDED.per_ticket_cents, per_order_cents = EXCLUDED.per_order_cents;

-- name: PriceLevelList :many
-- The event's price levels: its seats' price tiers, then its GA tiers.
SELECT id AS price_tier_id, 0::bigint AS ga_tier_id, name, price_cents FROM price_tiers WHERE price_tiers.event_id = @event_id
UNION ALL
SELECT 0::bigint, id, name, price_cents FROM ga_tiers WHERE ga_tiers.event_id = @event_id
ORDER BY ga_tier_id, price_tier_id;

-- name: TicketTypeList :many
SELECT id, name, position, max_per_order, counts_as_adult, needs_adult, desk_only, code_only, paused
FROM ticket_types WHERE event_id = @event_id ORDER BY position, id;

-- name: TicketTypePriceList :many
SELECT type_id, coalesce(price_tier_id, 0)::bigint AS price_tier_id, coalesce(ga_tier_id, 0)::bigint AS ga_tier_id, price_cents
FROM ticket_type_prices WHERE event_id = @event_id;

-- name: TicketTypeCreate :one
INSERT INTO ticket_types (event_id, name, position, max_per_order, counts_as_adult, needs_adult, desk_only, code_only)
VALUES (@event_id, @name, @position, sqlc.narg('max_per_order'), @counts_as_adult, @needs_adult, @desk_only, @code_only)
RETURNING id;

-- name: TicketTypeUpdate :execrows
UPDATE ticket_types
SET name = @name, position = @position, max_per_order = sqlc.narg('max_per_order'), counts_as_adult = @counts_as_adult,
    needs_adult = @needs_adult, desk_only = @desk_only, code_only = @code_only
WHERE event_id = @event_id AND id = @id;

-- name: TicketTypeSetPaused :execrows
UPDATE ticket_types SET paused = @paused WHERE event_id = @event_id AND id = @id;

-- name: TicketTypePricesClear :exec
DELETE FROM ticket_type_prices WHERE event_id = @event_id AND type_id = @type_id;

-- name: TicketTypePriceAdd :exec
-- One of price_tier_id and ga_tier_id is 0: it is stored as NULL.
INSERT INTO ticket_type_prices (event_id, type_id, price_tier_id, ga_tier_id, price_cents)
VALUES (@event_id, @type_id, nullif(@price_tier_id::bigint, 0), nullif(@ga_tier_id::bigint, 0), @price_cents);

-- name: HoldSeatTypeSet :execrows
-- A held seat's ticket type. It never touches the seat row: the claim stays as it is.
-- Only a seat the hold holds now, and a type of the event, are accepted.
INSERT INTO hold_seat_types (event_id, hold_id, seat_id, type_id)
SELECT s.event_id, s.held_by, s.id, @type_id
FROM seats s
WHERE s.event_id = @event_id AND s.id = @seat_id AND s.held_by = @hold_id
ON CONFLICT (event_id, hold_id, seat_id) DO UPDATE SET type_id = EXCLUDED.type_id;

-- name: HoldGATypesClear :exec
DELETE FROM hold_ga_types WHERE event_id = @event_id AND hold_id = @hold_id AND ga_tier_id = @ga_tier_id;

-- name: HoldGATypeAdd :exec
INSERT INTO hold_ga_types (event_id, hold_id, ga_tier_id, type_id, quantity)
VALUES (@event_id, @hold_id, @ga_tier_id, @type_id, @quantity);

-- name: HoldBasket :one
-- A hold as its basket is priced, in one statement: the hold row (live: hold_is_live),
-- its event's price configuration version (0: none), its GA tier, the access code it
-- was made with, the voucher entered in it, and how many of its GA places are of each
-- type (the ga_type_ arrays, one element a row of hold_ga_types, by tier and type; the
-- rows read once, into the three arrays in the same order).
SELECT h.id, h.buyer, h.seat_count, h.ga_tier_id, h.ga_quantity, h.expires_at, hold_is_live(h) AS live,
       coalesce(pv.version, 0)::bigint AS price_version,
       g.name AS ga_tier_name, g.price_cents AS ga_price_cents,
       c.id AS code_id, c.code, c.presale_starts_at, c.presale_ends_at, c.quota, c.places_used, c.reveals_type_id,
       c.paused AS code_paused,
       v.id AS voucher_id, v.code AS voucher_code, v.amount_off_cents, v.percent_off_bp, v.type_ids, v.usage_limit,
       v.used, v.valid_from, v.valid_until, v.paused AS voucher_paused,
       coalesce(gt.tiers, '{}')::bigint[] AS ga_type_tiers,
       coalesce(gt.types, '{}')::bigint[] AS ga_type_ids,
       coalesce(gt.quantities, '{}')::integer[] AS ga_type_quantities
FROM holds h
CROSS JOIN LATERAL (
    SELECT array_agg(t.ga_tier_id ORDER BY t.ga_tier_id, t.type_id) AS tiers,
           array_agg(t.type_id ORDER BY t.ga_tier_id, t.type_id) AS types,
           array_agg(t.quantity ORDER BY t.ga_tier_id, t.type_id) AS quantities
    FROM hold_ga_types t WHERE t.event_id = h.event_id AND t.hold_id = h.id
) gt
LEFT JOIN event_price_versions pv ON pv.event_id = h.event_id
LEFT JOIN ga_tiers g ON g.event_id = h.event_id AND g.id = h.ga_tier_id
LEFT JOIN access_codes c ON c.event_id = h.event_id AND c.id = h.access_code_id
LEFT JOIN hold_vouchers hv ON hv.event_id = h.event_id AND hv.hold_id = h.id
LEFT JOIN vouchers v ON v.event_id = hv.event_id AND v.id = hv.voucher_id
WHERE h.event_id = @event_id AND h.id = @id;

-- name: HoldBasketSeats :many
-- A hold's seats, both for its answer (held: seat_is_held, the seats it still has) and
-- as priced lines with their chosen types: the seat row decides which seats are in the
-- basket; a type chosen for a seat the hold no longer holds is not read.
SELECT s.id, s.section, s.row_label, s.number, s.price_cents, s.price_tier_id,
       coalesce(t.type_id, 0)::bigint AS type_id, seat_is_held(s) AS held
FROM seats s
LEFT JOIN hold_seat_types t ON t.event_id = s.event_id AND t.hold_id = s.held_by AND t.seat_id = s.id
WHERE s.event_id = @event_id AND s.held_by = @hold_id::bigint
ORDER BY s.id;


-- name: OrderLineList :many
SELECT line, kind, seat_id, ga_tier_id, type_id, label, price_cents, fee_cents, discount_cents, tax_cents, total_cents
FROM order_lines WHERE event_id = @event_id AND order_id = @order_id ORDER BY line;

-- name: OrderFeeCents :one
-- The per-order fee an order charged (its order_fee lines); 0 when none.
SELECT coalesce(sum(total_cents), 0)::int FROM order_lines
WHERE event_id = @event_id AND order_id = @order_id AND kind = 'order_fee';
