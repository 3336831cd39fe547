-- The per-buyer limit's count. What a buyer holds or owns on an event is the seats and
-- general-admission places of their holds that are bought, or live now (hold_live.sql),
-- apart from one hold (p_except_hold; 0: none). The statements that let a buyer take
-- more (hold_seats, HoldCreate, BuyerWithinLimit at a sale) compare it with the limit
-- after the buyer's advisory lock: read with that statement's fresh snapshot, it counts
-- every earlier request of the buyer.
--
-- PL/pgSQL rather than SQL: a SQL function that cannot be inlined (this one
-- aggregates) is planned again at every call of the statement that calls it, while
-- PL/pgSQL keeps its plan for the connection. STABLE: it reads with the snapshot of the
-- statement that calls it.
CREATE OR REPLACE FUNCTION buyer_places(p_event_id bigint, p_buyer text, p_except_hold bigint)
RETURNS int LANGUAGE plpgsql STABLE AS $$
BEGIN
    RETURN (SELECT coalesce(sum(h.seat_count + h.ga_quantity), 0)::int
            FROM holds h
            WHERE h.event_id = p_event_id AND h.buyer = p_buyer AND h.id <> p_except_hold
              AND (h.sold_at IS NOT NULL OR hold_is_live(h)));
END;
$$;

-- buyer_basket is buyer_places(p_event_id, p_buyer, 0) and, from the same scan of the
-- buyer's holds, their basket (hold_basket.sql): the newest live hold that no order
-- names yet; NULL when they have none. hold_seats asks it, after the buyer's lock, for
-- a hold call whose seats join the basket.
CREATE OR REPLACE FUNCTION buyer_basket(p_event_id bigint, p_buyer text, OUT held int, OUT basket bigint)
LANGUAGE plpgsql STABLE AS $$
BEGIN
    SELECT coalesce(sum(h.seat_count + h.ga_quantity), 0)::int,
           max(h.id) FILTER (WHERE hold_is_live(h) AND NOT EXISTS (
               SELECT 1 FROM orders o WHERE o.event_id = h.event_id AND o.hold_id = h.id))
    INTO held, basket
    FROM holds h
    WHERE h.event_id = p_event_id AND h.buyer = p_buyer
      AND (h.sold_at IS NOT NULL OR hold_is_live(h));
END;
$$;
