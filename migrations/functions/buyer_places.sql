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
