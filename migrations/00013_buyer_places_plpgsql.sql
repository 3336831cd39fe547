-- +goose Up

-- buyer_places in PL/pgSQL, the same query and the same snapshot rules (STABLE: it
-- reads with the snapshot of the statement that calls it, which after the buyer's
-- advisory lock includes every earlier request of the buyer). A SQL function that
-- cannot be inlined (this one aggregates) is planned again at every call of the
-- statement that calls it; PL/pgSQL keeps its plan for the connection. pgbench, one
-- client, prepared, on an onsale's 15,000 holds: 0.095 ms a call before, 0.047 ms
-- after, the same as the bare query (0.045 ms). Every hold and every payment's
-- confirmation calls it.
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION buyer_places(p_event_id bigint, p_buyer text, p_except_hold bigint)
RETURNS int LANGUAGE plpgsql STABLE AS $$
BEGIN
    RETURN (SELECT coalesce(sum(h.seat_count + h.ga_quantity), 0)::int
            FROM holds h
            WHERE h.event_id = p_event_id AND h.buyer = p_buyer AND h.id <> p_except_hold
              AND h.released_at IS NULL AND (h.sold_at IS NOT NULL OR h.expires_at > now()));
END;
$$;
-- +goose StatementEnd

-- +goose Down
CREATE OR REPLACE FUNCTION buyer_places(p_event_id bigint, p_buyer text, p_except_hold bigint)
RETURNS int LANGUAGE sql STABLE AS $$
    SELECT coalesce(sum(h.seat_count + h.ga_quantity), 0)::int
    FROM holds h
    WHERE h.event_id = p_event_id AND h.buyer = p_buyer AND h.id <> p_except_hold
      AND h.released_at IS NULL AND (h.sold_at IS NOT NULL OR h.expires_at > now())
$$;
