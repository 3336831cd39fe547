-- +goose Up

-- buyer_places is the one statement of the per-event limit's rule: what a buyer holds
-- or owns is the seats and GA places of their holds that are neither released nor
-- lapsed, plus those sold. Read it after the buyer's advisory lock (a fresh snapshot),
-- and it counts every earlier request of the buyer.
CREATE FUNCTION buyer_places(p_event_id bigint, p_buyer text, p_except_hold bigint)
RETURNS int LANGUAGE sql STABLE AS $$
    SELECT coalesce(sum(h.seat_count + h.ga_quantity), 0)::int
    FROM holds h
    WHERE h.event_id = p_event_id AND h.buyer = p_buyer AND h.id <> p_except_hold
      AND h.released_at IS NULL AND (h.sold_at IS NOT NULL OR h.expires_at > now())
$$;

-- hold_seats holds exactly these seats for a buyer, all or nothing, in one call: one
-- round trip and one statement's transaction instead of five, on the path an onsale
-- hammers. Inside, each step is its own statement with a fresh snapshot (the function
-- is volatile), so:
--   1. the buyer's advisory lock serialises this buyer's holds on this event;
--   2. the buyer's count, read after the lock, includes every earlier hold;
--   3. one seat is claimed by the plain conditional UPDATE, its row count the verdict;
--      several are first locked in id order (overlapping holds queue instead of
--      deadlocking) and re-checked on the locked rows, which is the verdict;
--   4. only if every seat was free are the hold row and the seats written.
-- It answers with one row per seat: status 'held' (the seats and the hold), or, with
-- nothing written, 'limit' (held = what the buyer has), 'unknown' (the seats not in
-- this event) or 'taken' (the seats someone else has).
-- +goose StatementBegin
CREATE FUNCTION hold_seats(p_event_id bigint, p_buyer text, p_seat_ids bigint[], p_ttl_seconds float8, p_limit int,
    OUT status text, OUT hold_id bigint, OUT expires_at timestamptz, OUT held int,
    OUT seat_id bigint, OUT section text, OUT row_label text, OUT number int, OUT price_cents int)
RETURNS SETOF record
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    v_held int;
    v_free bigint[];
    v_hold bigint;
    v_expires timestamptz;
BEGIN
    PERFORM pg_advisory_xact_lock(hashtextextended(p_buyer, p_event_id));

    v_held := buyer_places(p_event_id, p_buyer, 0);
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
        WHERE s.event_id = p_event_id AND s.id = p_seat_ids[1]
          AND s.sold_at IS NULL AND (s.held_by IS NULL OR s.hold_expires_at <= now())
        RETURNING 'held'::text, v_hold, v_expires, v_held + 1,
                  s.id, s.section, s.row_label, s.number, s.price_cents;
        IF FOUND THEN
            INSERT INTO holds (id, event_id, buyer, seat_count, expires_at)
            OVERRIDING SYSTEM VALUE
            VALUES (v_hold, p_event_id, p_buyer, 1, v_expires);
            RETURN;
        END IF;
        v_free := '{}';
    ELSE
        SELECT coalesce(array_agg(f.id), '{}') INTO v_free
        FROM (SELECT s.id FROM seats s
              WHERE s.event_id = p_event_id AND s.id = ANY(p_seat_ids)
                AND s.sold_at IS NULL AND (s.held_by IS NULL OR s.hold_expires_at <= now())
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

    INSERT INTO holds (event_id, buyer, seat_count, expires_at)
    VALUES (p_event_id, p_buyer, cardinality(p_seat_ids), now() + make_interval(secs => p_ttl_seconds))
    RETURNING holds.id, holds.expires_at INTO v_hold, v_expires;

    RETURN QUERY
    UPDATE seats s SET held_by = v_hold, hold_expires_at = v_expires
    WHERE s.event_id = p_event_id AND s.id = ANY(v_free)
    RETURNING 'held'::text, v_hold, v_expires, v_held + cardinality(p_seat_ids),
              s.id, s.section, s.row_label, s.number, s.price_cents;
END;
$$;
-- +goose StatementEnd

-- +goose Down
DROP FUNCTION hold_seats(bigint, text, bigint[], float8, int);
DROP FUNCTION buyer_places(bigint, text, bigint);
