-- hold_seats holds exactly these seats for a buyer, all or nothing, in one call: one
-- round trip and one statement's transaction, on the path an onsale hammers. Inside,
-- each step is its own statement with a fresh snapshot (the function is volatile):
--   1. the sales window (sales_window.sql), read with the event row by its primary key
--      and by the database clock: now() is the transaction's start, so the window and
--      the claim see one instant. Outside the window nothing is locked or written and
--      the answer is one row, status 'not_on_sale' (expires_at carries the onsale
--      time) or 'closed' (expires_at carries the close). An unknown event passes and
--      is found out at step 4 (its seats are 'unknown'). The event's own hold minutes,
--      when it has them, replace p_ttl_seconds. With an access code (p_code_id; 0:
--      none), its lock is taken and the code decides (hold_presale, presale.sql):
--      before the onsale it opens the sale for its quota, or the answer is
--      'not_on_sale' or 'presale_quota'; the hold records the code it passed with;
--   2. the buyer's advisory lock serialises this buyer's holds on this event;
--   3. the buyer's count (buyer_places), read after the lock, includes every earlier
--      hold: past p_limit, the answer is one row 'limit' (held = what the buyer has).
--      With p_basket (the API's hold call, whose seats join the buyer's basket) the
--      same scan finds the basket (buyer_basket): if the buyer has one, nothing is
--      written and the answer is one row 'basket' (hold_id = the basket), for the
--      caller to add the seats to it (hold_add_seats). Every hold of the buyer is
--      made under this lock, so a basket committed before it is seen;
--   4. one seat is claimed by the plain conditional UPDATE, its row count the verdict;
--      several are first locked in id order (overlapping holds queue instead of
--      deadlocking) and re-checked on the locked rows (seat_is_free), which is the
--      verdict;
--   5. only if every seat was free are the hold row and the seats written.
-- It answers with one row per seat: status 'held' (the seats and the hold), or, with
-- nothing written, 'unknown' (the seats not in this event) or 'taken' (the seats
-- someone else has).
--
-- The asked-for seats' ids are read through a sub-select, as the claims in
-- queries/seats.sql read theirs: PL/pgSQL prepares its statements with the same plan
-- cache as a client, and with s.id = ANY(p_seat_ids) each call's own plan, which
-- counts the ids, is cheaper than the generic one, so the lock and the claim would be
-- planned anew at every hold of two seats or more (TestHoldSeatsKeepsItsPlans).
CREATE OR REPLACE FUNCTION hold_seats(p_event_id bigint, p_buyer text, p_seat_ids bigint[], p_ttl_seconds float8, p_limit int,
    p_code_id bigint DEFAULT 0, p_basket boolean DEFAULT false,
    OUT status text, OUT hold_id bigint, OUT expires_at timestamptz, OUT held int,
    OUT seat_id bigint, OUT section text, OUT row_label text, OUT number int, OUT price_cents int)
RETURNS SETOF record
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    v_window text;
    v_at timestamptz;
    v_minutes int;
    v_held int;
    v_free bigint[];
    v_hold bigint;
    v_expires timestamptz;
    v_pre record;
    v_code bigint;
    v_basket bigint;
BEGIN
    SELECT event_sale_state(e),
           CASE WHEN now() < e.onsale_at THEN e.onsale_at ELSE event_sales_close(e) END,
           e.hold_minutes
    INTO v_window, v_at, v_minutes
    FROM events e WHERE e.id = p_event_id;
    IF v_minutes IS NOT NULL THEN
        p_ttl_seconds := v_minutes * 60;
    END IF;
    IF p_code_id <> 0 AND v_window IN ('on_sale', 'not_on_sale') THEN
        PERFORM access_code_lock(p_event_id, p_code_id);
        SELECT * INTO v_pre FROM hold_presale(p_event_id, v_window, p_code_id, cardinality(p_seat_ids), false);
        v_window := v_pre.status;
        v_code := v_pre.code_id;
    END IF;
    IF v_window IN ('not_on_sale', 'closed', 'presale_quota') THEN
        RETURN QUERY SELECT v_window, NULL::bigint, v_at, 0,
                            NULL::bigint, NULL::text, NULL::text, NULL::int, NULL::int;
        RETURN;
    END IF;

    PERFORM pg_advisory_xact_lock(hashtextextended(p_buyer, p_event_id));

    IF p_basket THEN
        SELECT b.held, b.basket INTO v_held, v_basket FROM buyer_basket(p_event_id, p_buyer) b;
        IF v_basket IS NOT NULL THEN
            RETURN QUERY SELECT 'basket'::text, v_basket, NULL::timestamptz, v_held,
                                NULL::bigint, NULL::text, NULL::text, NULL::int, NULL::int;
            RETURN;
        END IF;
    ELSE
        v_held := buyer_places(p_event_id, p_buyer, 0);
    END IF;
    IF v_held + cardinality(p_seat_ids) > p_limit THEN
        RETURN QUERY SELECT 'limit'::text, NULL::bigint, NULL::timestamptz, v_held,
                            NULL::bigint, NULL::text, NULL::text, NULL::int, NULL::int;
        RETURN;
    END IF;

    IF cardinality(p_seat_ids) = 1 THEN
        -- One seat, the common case: the conditional UPDATE is the claim and its row
        -- count the verdict; the hold row follows under the id it was given.
        v_hold := nextval(pg_get_serial_sequence('holds', 'id'));
        v_expires := now() + make_interval(secs => p_ttl_seconds);
        RETURN QUERY
        UPDATE seats s SET held_by = v_hold, hold_expires_at = v_expires
        WHERE s.event_id = p_event_id AND s.id = p_seat_ids[1] AND seat_is_free(s)
        RETURNING 'held'::text, v_hold, v_expires, v_held + 1,
                  s.id, s.section, s.row_label, s.number, s.price_cents;
        IF FOUND THEN
            INSERT INTO holds (id, event_id, buyer, seat_count, expires_at, access_code_id)
            OVERRIDING SYSTEM VALUE
            VALUES (v_hold, p_event_id, p_buyer, 1, v_expires, v_code);
            RETURN;
        END IF;
        v_free := '{}';
    ELSE
        SELECT coalesce(array_agg(f.id), '{}') INTO v_free
        FROM (SELECT s.id FROM seats s
              WHERE s.event_id = p_event_id AND s.id = ANY((SELECT p_seat_ids)::bigint[])
                AND seat_is_free(s)
              ORDER BY s.id
              FOR UPDATE) f;
    END IF;

    IF cardinality(v_free) < cardinality(p_seat_ids) THEN
        IF EXISTS (SELECT 1 FROM unnest(p_seat_ids) a(id)
                   WHERE NOT EXISTS (SELECT 1 FROM seats s WHERE s.event_id = p_event_id AND s.id = a.id)) THEN
            RETURN QUERY SELECT 'unknown'::text, NULL::bigint, NULL::timestamptz, v_held,
                                a.id, NULL::text, NULL::text, NULL::int, NULL::int
                         FROM unnest(p_seat_ids) a(id)
                         WHERE NOT EXISTS (SELECT 1 FROM seats s WHERE s.event_id = p_event_id AND s.id = a.id);
        ELSE
            RETURN QUERY SELECT 'taken'::text, NULL::bigint, NULL::timestamptz, v_held,
                                a.id, NULL::text, NULL::text, NULL::int, NULL::int
                         FROM unnest(p_seat_ids) a(id)
                         WHERE a.id <> ALL(v_free);
        END IF;
        RETURN;
    END IF;

    INSERT INTO holds (event_id, buyer, seat_count, expires_at, access_code_id)
    VALUES (p_event_id, p_buyer, cardinality(p_seat_ids), now() + make_interval(secs => p_ttl_seconds), v_code)
    RETURNING holds.id, holds.expires_at INTO v_hold, v_expires;

    RETURN QUERY
    UPDATE seats s SET held_by = v_hold, hold_expires_at = v_expires
    WHERE s.event_id = p_event_id AND s.id = ANY((SELECT v_free)::bigint[])
    RETURNING 'held'::text, v_hold, v_expires, v_held + cardinality(p_seat_ids),
              s.id, s.section, s.row_label, s.number, s.price_cents;
END;
$$;
