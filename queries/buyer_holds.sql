-- The holds of one buyer on one event, as the seat page lists them.

-- name: HoldsOfBuyer :many
-- The buyer's live holds on one event, oldest first, with their GA tier if any. A hold
-- checked out but not yet paid is still live: the buyer may go back to its checkout.
SELECT h.id, h.expires_at, h.ga_quantity, h.ga_tier_id,
       coalesce(t.name, '')::text AS ga_tier_name, coalesce(t.price_cents, 0)::int AS ga_price_cents,
       EXISTS (SELECT 1 FROM orders o WHERE o.event_id = h.event_id AND o.hold_id = h.id) AS checkout_begun
FROM holds h
LEFT JOIN ga_tiers t ON t.event_id = h.event_id AND t.id = h.ga_tier_id
WHERE h.event_id = @event_id AND h.buyer = @buyer
  AND hold_is_live(h)
ORDER BY h.id;

-- name: SeatsOfHolds :many
-- The seats these holds of one event still have, by hold: none of a lapsed hold,
-- whatever the tidy-up did.
SELECT held_by::bigint AS hold_id, id, section, row_label, number, price_cents
FROM seats
WHERE event_id = @event_id AND held_by = ANY(@hold_ids::bigint[])
  AND seat_is_held(seats)
ORDER BY held_by, id;
