-- hold_seats_client is hold_seats for a hold made from a client network (p_client;
-- empty: none) that may hold at most p_client_limit seats and places of the event at
-- once (0: no limit, the network is only recorded). The network's lock (taken before
-- the buyer's, always in that order) makes its count (client_places) include every
-- earlier hold of the network, whatever its session: over the limit, nothing is held
-- and the answer is one row 'client_limit' with what the network holds (held) and when
-- its first hold lapses (expires_at). Otherwise the answer is hold_seats', and the hold
-- row carries the network: hold_seats inserts it without naming the network, and the
-- column's default reads the transaction's boxoffice.client_key setting, which this
-- function sets around its call (when there is a network) and clears after. p_code_id
-- is the buyer's access code (0: none) and p_basket whether the seats join the buyer's
-- basket (the answer 'basket' when they have one), both passed on to hold_seats.
--
-- p_wait false is for a batch of holds in one transaction (booking's batch.go): a
-- network whose lock another transaction has is not waited for, the answer is one row
-- 'busy', and the caller runs that hold again on its own. Waiting there could close a
-- cycle with another batch, which takes its seats' locks in another order.
CREATE OR REPLACE FUNCTION hold_seats_client(p_event_id bigint, p_buyer text, p_seat_ids bigint[], p_ttl_seconds float8, p_limit int,
    p_client text, p_client_limit int, p_wait boolean, p_code_id bigint, p_basket boolean DEFAULT false,
    OUT status text, OUT hold_id bigint, OUT expires_at timestamptz, OUT held int,
    OUT seat_id bigint, OUT section text, OUT row_label text, OUT number int, OUT price_cents int)
RETURNS SETOF record
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    v_lock bigint := hashtextextended('client/' || p_client, p_event_id);
    v_places record;
BEGIN
    IF p_client <> '' AND p_client_limit > 0 THEN
        IF p_wait THEN
            PERFORM pg_advisory_xact_lock(v_lock);
        ELSIF NOT pg_try_advisory_xact_lock(v_lock) THEN
            RETURN QUERY SELECT 'busy'::text, NULL::bigint, NULL::timestamptz, 0,
                                NULL::bigint, NULL::text, NULL::text, NULL::int, NULL::int;
            RETURN;
        END IF;
        SELECT * INTO v_places FROM client_places(p_event_id, p_client);
        IF v_places.held + cardinality(p_seat_ids) > p_client_limit THEN
            RETURN QUERY SELECT 'client_limit'::text, NULL::bigint, v_places.next_free, v_places.held,
                                NULL::bigint, NULL::text, NULL::text, NULL::int, NULL::int;
            RETURN;
        END IF;
    END IF;
    -- Without a network the setting is left alone: every call here clears it after
    -- itself, so it is empty (or unset) already.
    IF p_client <> '' THEN
        PERFORM set_config('boxoffice.client_key', p_client, true);
    END IF;
    RETURN QUERY SELECT * FROM hold_seats(p_event_id, p_buyer, p_seat_ids, p_ttl_seconds, p_limit, p_code_id, p_basket);
    IF p_client <> '' THEN
        PERFORM set_config('boxoffice.client_key', '', true);
    END IF;
END;
$$;
