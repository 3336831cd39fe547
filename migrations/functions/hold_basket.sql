-- The buyer's basket: one live hold per buyer and event that grows and shrinks while
-- its checkout has not begun (no order names it yet). An order's amount is what its
-- hold had when the order was made, so once an order exists the hold is fixed.
--
-- Locks are taken in one order everywhere: the buyer's basket lock, the client
-- network's, hold rows (by id), an access code's (presale.sql), then the buyer's. Confirm takes hold then buyer, and
-- hold_seats_client network then buyer, so no cycle can form.

-- hold_basket_lock: the hold row of a basket, locked, if p_buyer may change it: the
-- answer's status is 'ok', or 'not_found' (no such hold, or another buyer's),
-- 'expired' (released, sold or lapsed) or 'checkout_begun' (an order exists for it).
CREATE OR REPLACE FUNCTION hold_basket_lock(p_event_id bigint, p_buyer text, p_hold_id bigint,
    OUT status text, OUT hold holds)
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
    SELECT * INTO hold FROM holds h WHERE h.event_id = p_event_id AND h.id = p_hold_id FOR UPDATE;
    IF NOT FOUND OR hold.buyer <> p_buyer THEN
        status := 'not_found';
    ELSIF NOT hold_is_live(hold) THEN
        status := 'expired';
    ELSIF EXISTS (SELECT 1 FROM orders o WHERE o.event_id = p_event_id AND o.hold_id = p_hold_id) THEN
        status := 'checkout_begun';
    ELSE
        status := 'ok';
    END IF;
END;
$$;

-- hold_add_seats adds exactly these seats to a hold of the buyer, all or nothing, in
-- one call, with the rules of hold_seats (hold_seats.sql): the sales window, the
-- client network's limit counted after its lock (hold_seats_client.sql), the buyer's
-- limit counted after the buyer's lock, and the seats claimed only if every one is
-- free, locked in id order and re-checked on the locked rows. The seats take the
-- hold's expiry: adding never extends a hold.
--
-- p_hold_id 0 is the buyer's basket: their newest live hold on the event without an
-- order, found under the buyer's basket lock so that two requests of one buyer cannot
-- both open one; with none, the seats open a new hold (hold_seats_client, p_ttl_seconds).
-- A checkout does not take that lock: when it begins on the basket between the look and
-- the hold's row lock, the seats open a new hold too, as they would a moment later.
-- Seats the hold already has are not asked again, so a repeated request changes
-- nothing. The answer is hold_seats' (one row per seat of the request, status 'held',
-- or one row saying why nothing was held), and the statuses of hold_basket_lock.
--
-- p_code_id is the buyer's access code (0: none): a new hold passes it to hold_seats.
-- Seats joining a hold take the hold's own code, if it records one: they must fit its
-- quota ('presale_quota'), and before the onsale it must still be open
-- (hold_presale); a hold without a code takes nothing before the onsale.
CREATE OR REPLACE FUNCTION hold_add_seats(p_event_id bigint, p_buyer text, p_hold_id bigint, p_seat_ids bigint[],
    p_ttl_seconds float8, p_limit int, p_client text, p_client_limit int, p_code_id bigint,
    OUT status text, OUT hold_id bigint, OUT expires_at timestamptz, OUT held int,
    OUT seat_id bigint, OUT section text, OUT row_label text, OUT number int, OUT price_cents int)
RETURNS SETOF record
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    v_window text;
    v_at timestamptz;
    v_lock record;
    v_places record;
    v_held int;
    v_new bigint[];
    v_free bigint[];
    v_code bigint;
    v_pre record;
    v_basket boolean := p_hold_id = 0;
BEGIN
    SELECT event_sale_state(e), CASE WHEN now() < e.onsale_at THEN e.onsale_at ELSE event_sales_close(e) END
    INTO v_window, v_at
    FROM events e WHERE e.id = p_event_id;
    IF NOT FOUND THEN
        v_window := 'unknown';
    END IF;
    IF v_window IN ('closed', 'unknown') OR (v_window = 'not_on_sale' AND p_code_id = 0) THEN
        RETURN QUERY SELECT v_window, NULL::bigint, v_at, 0,
                            NULL::bigint, NULL::text, NULL::text, NULL::int, NULL::int;
        RETURN;
    END IF;

    IF p_hold_id = 0 THEN
        PERFORM pg_advisory_xact_lock(hashtextextended('basket/' || p_buyer, p_event_id));
        SELECT h.id INTO p_hold_id FROM holds h
        WHERE h.event_id = p_event_id AND h.buyer = p_buyer AND hold_is_live(h)
          AND NOT EXISTS (SELECT 1 FROM orders o WHERE o.event_id = h.event_id AND o.hold_id = h.id)
        ORDER BY h.id DESC LIMIT 1;
        IF NOT FOUND THEN
            RETURN QUERY SELECT * FROM hold_seats_client(p_event_id, p_buyer, p_seat_ids, p_ttl_seconds, p_limit,
                                                         p_client, p_client_limit, true, p_code_id);
            RETURN;
        END IF;
    END IF;

    IF p_client <> '' AND p_client_limit > 0 THEN
        PERFORM pg_advisory_xact_lock(hashtextextended('client/' || p_client, p_event_id));
    END IF;
    SELECT * INTO v_lock FROM hold_basket_lock(p_event_id, p_buyer, p_hold_id);
    IF v_lock.status = 'checkout_begun' AND v_basket THEN
        RETURN QUERY SELECT * FROM hold_seats_client(p_event_id, p_buyer, p_seat_ids, p_ttl_seconds, p_limit,
                                                     p_client, p_client_limit, true, p_code_id);
        RETURN;
    END IF;
    IF v_lock.status <> 'ok' THEN
        RETURN QUERY SELECT v_lock.status, p_hold_id, NULL::timestamptz, 0,
                            NULL::bigint, NULL::text, NULL::text, NULL::int, NULL::int;
        RETURN;
    END IF;
    v_code := (v_lock.hold).access_code_id;
    IF v_window = 'not_on_sale' AND v_code IS NULL THEN
        RETURN QUERY SELECT v_window, NULL::bigint, v_at, 0,
                            NULL::bigint, NULL::text, NULL::text, NULL::int, NULL::int;
        RETURN;
    END IF;

    -- The seats this hold has already are not asked again.
    v_new := ARRAY(SELECT DISTINCT a.id FROM unnest(p_seat_ids) a(id)
                   WHERE NOT EXISTS (SELECT 1 FROM seats s
                                     WHERE s.event_id = p_event_id AND s.id = a.id
                                       AND s.held_by = p_hold_id AND seat_is_held(s)));

    IF cardinality(v_new) > 0 AND p_client <> '' AND p_client_limit > 0 THEN
        SELECT * INTO v_places FROM client_places(p_event_id, p_client);
        IF v_places.held + cardinality(v_new) > p_client_limit THEN
            RETURN QUERY SELECT 'client_limit'::text, NULL::bigint, v_places.next_free, v_places.held,
                                NULL::bigint, NULL::text, NULL::text, NULL::int, NULL::int;
            RETURN;
        END IF;
    END IF;

    IF cardinality(v_new) > 0 AND v_code IS NOT NULL THEN
        PERFORM access_code_lock(p_event_id, v_code);
        SELECT * INTO v_pre FROM hold_presale(p_event_id, v_window, v_code, cardinality(v_new), true);
        IF v_pre.status <> 'on_sale' THEN
            RETURN QUERY SELECT v_pre.status, NULL::bigint, v_at, 0,
                                NULL::bigint, NULL::text, NULL::text, NULL::int, NULL::int;
            RETURN;
        END IF;
    END IF;

    PERFORM pg_advisory_xact_lock(hashtextextended(p_buyer, p_event_id));
    v_held := buyer_places(p_event_id, p_buyer, 0);
    IF v_held + cardinality(v_new) > p_limit THEN
        RETURN QUERY SELECT 'limit'::text, NULL::bigint, NULL::timestamptz, v_held,
                            NULL::bigint, NULL::text, NULL::text, NULL::int, NULL::int;
        RETURN;
    END IF;

    SELECT coalesce(array_agg(f.id), '{}') INTO v_free
    FROM (SELECT s.id FROM seats s
          WHERE s.event_id = p_event_id AND s.id = ANY((SELECT v_new)::bigint[]) AND seat_is_free(s)
          ORDER BY s.id
          FOR UPDATE) f;
    IF cardinality(v_free) < cardinality(v_new) THEN
        IF EXISTS (SELECT 1 FROM unnest(v_new) a(id)
                   WHERE NOT EXISTS (SELECT 1 FROM seats s WHERE s.event_id = p_event_id AND s.id = a.id)) THEN
            RETURN QUERY SELECT 'unknown'::text, NULL::bigint, NULL::timestamptz, v_held,
                                a.id, NULL::text, NULL::text, NULL::int, NULL::int
                         FROM unnest(v_new) a(id)
                         WHERE NOT EXISTS (SELECT 1 FROM seats s WHERE s.event_id = p_event_id AND s.id = a.id);
        ELSE
            RETURN QUERY SELECT 'taken'::text, NULL::bigint, NULL::timestamptz, v_held,
                                a.id, NULL::text, NULL::text, NULL::int, NULL::int
                         FROM unnest(v_new) a(id)
                         WHERE a.id <> ALL(v_free);
        END IF;
        RETURN;
    END IF;

    IF cardinality(v_free) > 0 THEN
        UPDATE seats s SET held_by = p_hold_id, hold_expires_at = (v_lock.hold).expires_at
        WHERE s.event_id = p_event_id AND s.id = ANY((SELECT v_free)::bigint[]);
        UPDATE holds h SET seat_count = h.seat_count + cardinality(v_free)
        WHERE h.event_id = p_event_id AND h.id = p_hold_id;
    END IF;

    RETURN QUERY
    SELECT 'held'::text, p_hold_id, (v_lock.hold).expires_at, v_held + cardinality(v_free),
           s.id, s.section, s.row_label, s.number, s.price_cents
    FROM seats s
    WHERE s.event_id = p_event_id AND s.id = ANY((SELECT p_seat_ids)::bigint[]) AND s.held_by = p_hold_id
    ORDER BY s.id;
END;
$$;

-- hold_remove_seat frees one seat of a hold of the buyer whose checkout has not begun,
-- and only that seat: status 'removed' with what the hold keeps (seat_count and
-- ga_quantity), 'not_in_hold' when the hold does not hold that seat, or a status of
-- hold_basket_lock. A hold left with nothing is released.
CREATE OR REPLACE FUNCTION hold_remove_seat(p_event_id bigint, p_buyer text, p_hold_id bigint, p_seat_id bigint,
    OUT status text, OUT seat_count int, OUT ga_quantity int)
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    v_lock record;
BEGIN
    seat_count := 0;
    ga_quantity := 0;
    SELECT * INTO v_lock FROM hold_basket_lock(p_event_id, p_buyer, p_hold_id);
    IF v_lock.status <> 'ok' THEN
        status := v_lock.status;
        RETURN;
    END IF;
    UPDATE seats s SET held_by = NULL, hold_expires_at = NULL
    WHERE s.event_id = p_event_id AND s.id = p_seat_id AND s.held_by = p_hold_id AND seat_is_held(s);
    IF NOT FOUND THEN
        status := 'not_in_hold';
        seat_count := (v_lock.hold).seat_count;
        ga_quantity := (v_lock.hold).ga_quantity;
        RETURN;
    END IF;
    UPDATE holds h SET seat_count = h.seat_count - 1,
                       released_at = CASE WHEN h.seat_count = 1 AND h.ga_quantity = 0 THEN now() END
    WHERE h.event_id = p_event_id AND h.id = p_hold_id
    RETURNING h.seat_count, h.ga_quantity INTO seat_count, ga_quantity;
    status := 'removed';
END;
$$;

-- hold_merge moves everything hold p_from has (seats and standing places) into the
-- buyer's hold p_into, which keeps its expiry, and releases p_from: how best available
-- and standing places, chosen as a hold of their own, join the basket. Both holds were
-- counted against the buyer's limit already, so the limit is not asked again. Both rows
-- are locked in id order. The status is 'merged', a status of hold_basket_lock for
-- either hold, 'other_tier' (the two hold places of different standing tiers: a
-- hold, and so an order, has one tier) or 'other_code' (the two record different
-- access codes, or one does and the other not: places never move into or out of a
-- code's quota). Nothing changes unless 'merged'.
CREATE OR REPLACE FUNCTION hold_merge(p_event_id bigint, p_buyer text, p_into bigint, p_from bigint,
    OUT status text, OUT moved bigint[])
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    v_a record;
    v_b record;
    v_into holds;
    v_from holds;
BEGIN
    SELECT * INTO v_a FROM hold_basket_lock(p_event_id, p_buyer, least(p_into, p_from));
    SELECT * INTO v_b FROM hold_basket_lock(p_event_id, p_buyer, greatest(p_into, p_from));
    IF v_a.status <> 'ok' THEN
        status := v_a.status;
        RETURN;
    ELSIF v_b.status <> 'ok' THEN
        status := v_b.status;
        RETURN;
    END IF;
    IF p_into < p_from THEN
        v_into := v_a.hold; v_from := v_b.hold;
    ELSE
        v_into := v_b.hold; v_from := v_a.hold;
    END IF;
    IF v_from.ga_quantity > 0 AND v_into.ga_quantity > 0 AND v_from.ga_tier_id <> v_into.ga_tier_id THEN
        status := 'other_tier';
        RETURN;
    END IF;
    IF v_from.access_code_id IS DISTINCT FROM v_into.access_code_id THEN
        status := 'other_code';
        RETURN;
    END IF;

    WITH m AS (
        UPDATE seats s SET held_by = p_into, hold_expires_at = v_into.expires_at
        WHERE s.event_id = p_event_id AND s.held_by = p_from AND seat_is_held(s)
        RETURNING s.id
    )
    SELECT coalesce(array_agg(m.id ORDER BY m.id), '{}') INTO moved FROM m;
    IF v_from.ga_quantity > 0 THEN
        INSERT INTO hold_ga_places (event_id, hold_id, tier_id, stripe, quantity)
        SELECT event_id, p_into, tier_id, stripe, quantity FROM hold_ga_places
        WHERE event_id = p_event_id AND hold_id = p_from
        ON CONFLICT (event_id, hold_id, tier_id, stripe)
        DO UPDATE SET quantity = hold_ga_places.quantity + EXCLUDED.quantity;
        DELETE FROM hold_ga_places WHERE event_id = p_event_id AND hold_id = p_from;
    END IF;
    UPDATE holds h SET seat_count = h.seat_count + cardinality(moved),
                       ga_quantity = h.ga_quantity + v_from.ga_quantity,
                       ga_tier_id = CASE WHEN h.ga_quantity = 0 THEN v_from.ga_tier_id ELSE h.ga_tier_id END
    WHERE h.event_id = p_event_id AND h.id = p_into;
    UPDATE holds h SET seat_count = 0, ga_quantity = 0, released_at = now()
    WHERE h.event_id = p_event_id AND h.id = p_from;
    status := 'merged';
END;
$$;
