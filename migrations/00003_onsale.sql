-- +goose Up

-- The sales window and the waiting room's settings, per event.
--
-- A sale is open from onsale_at (inclusive) to sales_close_at (exclusive), or to
-- starts_at when sales_close_at is NULL. Only the database clock decides: every
-- statement that starts a sale (hold_seats below, HoldCreate, OrderCreate,
-- OrderClaimPayment) carries the window in its own condition. The payment webhook's
-- confirm does not: the money is taken, and selling what was held in time is right.
--
-- queue_rate is double precision rather than numeric: it is a rate (admissions per
-- second, fractions allowed), compared and multiplied, never summed as money, and it
-- reaches Go as a float64 without a decimal type in between. queue_token_ttl_seconds is
-- whole seconds rather than an interval: an interval may carry months and days, which
-- have no fixed length, while a token's lifetime is a plain duration (time.Duration in
-- Go), and a CHECK on an integer says "positive" without any ambiguity.
ALTER TABLE events
    ADD COLUMN sales_close_at timestamptz,
    ADD COLUMN queue_enabled boolean NOT NULL DEFAULT false,
    ADD COLUMN queue_slots integer NOT NULL DEFAULT 500 CHECK (queue_slots > 0),
    ADD COLUMN queue_rate double precision NOT NULL DEFAULT 50 CHECK (queue_rate > 0),
    ADD COLUMN queue_token_ttl_seconds integer NOT NULL DEFAULT 900 CHECK (queue_token_ttl_seconds > 0),
    ADD CONSTRAINT events_sales_window CHECK (sales_close_at IS NULL OR sales_close_at > onsale_at);

-- hold_seats as in 00002, with the sales window checked first, by the database clock,
-- in the same call that claims: now() is the transaction's start, so the window and the
-- claim see one instant. Outside the window nothing is locked or written and the
-- answer is one row, status 'not_on_sale' (expires_at carries the onsale time) or
-- 'closed' (expires_at carries the close). The event row is read by its primary key:
-- the one extra index lookup on the hot path. An unknown event passes the check and is
-- found out as before (its seats are 'unknown').
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION hold_seats(p_event_id bigint, p_buyer text, p_seat_ids bigint[], p_ttl_seconds float8, p_limit int,
    OUT status text, OUT hold_id bigint, OUT expires_at timestamptz, OUT held int,
    OUT seat_id bigint, OUT section text, OUT row_label text, OUT number int, OUT price_cents int)
RETURNS SETOF record
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    v_window text;
    v_at timestamptz;
    v_held int;
    v_free bigint[];
    v_hold bigint;
    v_expires timestamptz;
BEGIN
    SELECT CASE WHEN now() < e.onsale_at THEN 'not_on_sale'
                WHEN now() >= coalesce(e.sales_close_at, e.starts_at) THEN 'closed' END,
           CASE WHEN now() < e.onsale_at THEN e.onsale_at ELSE coalesce(e.sales_close_at, e.starts_at) END
    INTO v_window, v_at
    FROM events e WHERE e.id = p_event_id;
    IF v_window IS NOT NULL THEN
        RETURN QUERY SELECT v_window, NULL::bigint, v_at, 0,
                            NULL::bigint, NULL::text, NULL::text, NULL::int, NULL::int;
        RETURN;
    END IF;

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

-- hold_seats of 00002, without the window.
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION hold_seats(p_event_id bigint, p_buyer text, p_seat_ids bigint[], p_ttl_seconds float8, p_limit int,
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

ALTER TABLE events
    DROP CONSTRAINT events_sales_window,
    DROP COLUMN queue_token_ttl_seconds,
    DROP COLUMN queue_rate,
    DROP COLUMN queue_slots,
    DROP COLUMN queue_enabled,
    DROP COLUMN sales_close_at;
