-- +goose Up

-- Venue layouts, kept apart from any event's inventory: an event copies its seats,
-- price tiers and standing areas from its venue's layout when it is created
-- (EventInventoryFromLayout and friends in queries/layouts.sql), and owns them from then
-- on. Editing a layout later changes the events made after the edit, never an existing
-- one: seats that may be held or sold are never rewritten behind a buyer's back.

-- The layout as staff entered it (sections in bulk, standing areas), so that the editor
-- can show it again; the rows below are what it generated.
ALTER TABLE venues ADD COLUMN layout jsonb NOT NULL DEFAULT '{}';

CREATE TABLE venue_price_tiers (
    venue_id    bigint NOT NULL REFERENCES venues (id),
    id          bigint GENERATED ALWAYS AS IDENTITY,
    name        text NOT NULL CHECK (name <> ''),
    price_cents integer NOT NULL CHECK (price_cents >= 0),
    PRIMARY KEY (venue_id, id),
    UNIQUE (venue_id, name, price_cents)
);

-- A seat of the layout: where the map draws it, its price tier, and whether it is a
-- wheelchair space or a companion seat next to one.
CREATE TABLE venue_seats (
    venue_id   bigint NOT NULL REFERENCES venues (id),
    id         bigint GENERATED ALWAYS AS IDENTITY,
    section    text NOT NULL CHECK (section <> ''),
    row_label  text NOT NULL CHECK (row_label <> ''),
    number     integer NOT NULL CHECK (number > 0),
    tier_id    bigint NOT NULL,
    rank       integer NOT NULL DEFAULT 0,
    x          integer NOT NULL,
    y          integer NOT NULL,
    accessible boolean NOT NULL DEFAULT false,
    companion  boolean NOT NULL DEFAULT false,
    PRIMARY KEY (venue_id, id),
    UNIQUE (venue_id, section, row_label, number),
    FOREIGN KEY (venue_id, tier_id) REFERENCES venue_price_tiers (venue_id, id)
);

CREATE TABLE venue_ga_areas (
    venue_id    bigint NOT NULL REFERENCES venues (id),
    id          bigint GENERATED ALWAYS AS IDENTITY,
    name        text NOT NULL CHECK (name <> ''),
    price_cents integer NOT NULL CHECK (price_cents >= 0),
    capacity    integer NOT NULL CHECK (capacity > 0),
    stripes     integer NOT NULL CHECK (stripes BETWEEN 1 AND 64),
    PRIMARY KEY (venue_id, id),
    UNIQUE (venue_id, name)
);

-- Companion seats travel with the inventory; a constant default adds the column
-- without rewriting the table.
ALTER TABLE seats ADD COLUMN companion boolean NOT NULL DEFAULT false;

-- published: an unpublished event is absent from the public pages and the API's list,
-- and refuses holds (hold_seats below, HoldCreate). Existing events stay published.
-- hold_minutes: how long a hold of this event lasts; NULL keeps the program's HOLD_TTL.
-- updated_at: when staff last changed the event.
ALTER TABLE events
    ADD COLUMN published boolean NOT NULL DEFAULT true,
    ADD COLUMN hold_minutes integer CHECK (hold_minutes BETWEEN 1 AND 60),
    ADD COLUMN updated_at timestamptz NOT NULL DEFAULT now();

-- hold_seats as in 00003, refusing an unpublished event as a closed sale and taking the
-- event's own hold minutes when it has them; all in the same read of the event row.
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION hold_seats(p_event_id bigint, p_buyer text, p_seat_ids bigint[], p_ttl_seconds float8, p_limit int,
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
BEGIN
    SELECT CASE WHEN NOT e.published THEN 'closed'
                WHEN now() < e.onsale_at THEN 'not_on_sale'
                WHEN now() >= coalesce(e.sales_close_at, e.starts_at) THEN 'closed' END,
           CASE WHEN now() < e.onsale_at THEN e.onsale_at ELSE coalesce(e.sales_close_at, e.starts_at) END,
           e.hold_minutes
    INTO v_window, v_at, v_minutes
    FROM events e WHERE e.id = p_event_id;
    IF v_minutes IS NOT NULL THEN
        p_ttl_seconds := v_minutes * 60;
    END IF;
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

-- hold_seats of 00003.
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

ALTER TABLE events DROP COLUMN updated_at, DROP COLUMN hold_minutes, DROP COLUMN published;
ALTER TABLE seats DROP COLUMN companion;
DROP TABLE venue_ga_areas, venue_seats, venue_price_tiers;
ALTER TABLE venues DROP COLUMN layout;
