-- client_places: the seats and places a client network (holds.client_key) holds on the
-- event now, in holds that are live (hold_live.sql), and when the first of those holds
-- lapses (NULL when it holds none). Bought seats are not counted: the limit is on
-- keeping stock off sale, and a purchase ends that. A scan of the network's few rows
-- in the index holds_client_live. PL/pgSQL for its kept plan, as buyer_places.
CREATE OR REPLACE FUNCTION client_places(p_event_id bigint, p_client text, OUT held int, OUT next_free timestamptz)
LANGUAGE plpgsql STABLE AS $$
BEGIN
    SELECT coalesce(sum(h.seat_count + h.ga_quantity), 0)::int, min(h.expires_at)
    INTO held, next_free
    FROM holds h
    WHERE h.event_id = p_event_id AND h.client_key = p_client AND hold_is_live(h);
END;
$$;
