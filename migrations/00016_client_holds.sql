-- +goose Up

-- A hold remembers the client network it was made from (an IPv4 address, or the /64
-- of an IPv6 one: booking.HoldRequest.Client), so that the seats and places one
-- network holds at once on an event are bounded in the statements that hold, however
-- many sessions it opens. NULL: no network counted (the box office's holds, or the
-- limit turned off).
ALTER TABLE holds ADD COLUMN client_key text;
ALTER TABLE holds ALTER COLUMN client_key SET STATISTICS 10; -- as the sale tables' other columns (00014)

-- hold_seats (00015) inserts its hold rows without naming the network: they take it
-- from the transaction's boxoffice.client_key setting, which hold_seats_client sets
-- around its call and clears after. Anywhere else the setting is unset or empty, and
-- the column NULL. (Set on its own: a default added with the column would be
-- evaluated once for the rows already there.)
ALTER TABLE holds ALTER COLUMN client_key SET DEFAULT nullif(current_setting('boxoffice.client_key', true), '');

-- The live holds of one network on one event, as client_places counts them: a scan of
-- that network's few rows, with what it sums.
CREATE INDEX holds_client_live ON holds (event_id, client_key, expires_at) INCLUDE (seat_count, ga_quantity)
    WHERE client_key IS NOT NULL AND released_at IS NULL AND sold_at IS NULL;

-- client_places: the seats and places a network holds on the event now (neither
-- released, nor sold, nor lapsed), and when the first of those holds lapses (NULL
-- when it holds none). Bought seats are not counted: the limit is on keeping stock off
-- sale, and a purchase ends that. PL/pgSQL for its kept plan, as buyer_places (00013).
-- +goose StatementBegin
CREATE FUNCTION client_places(p_event_id bigint, p_client text, OUT held int, OUT next_free timestamptz)
LANGUAGE plpgsql STABLE AS $$
BEGIN
    SELECT coalesce(sum(h.seat_count + h.ga_quantity), 0)::int, min(h.expires_at)
    INTO held, next_free
    FROM holds h
    WHERE h.event_id = p_event_id AND h.client_key = p_client
      AND h.released_at IS NULL AND h.sold_at IS NULL AND h.expires_at > now();
END;
$$;
-- +goose StatementEnd

-- hold_seats_client is hold_seats for a hold made from a client network (p_client;
-- empty: none) that may hold at most p_client_limit seats and places of the event at
-- once (0: no limit, the network is only recorded). The network's lock (taken before the buyer's, always in that order) makes its
-- count include every earlier hold of the network, whatever its session: over the
-- limit, nothing is held and the answer is one row 'client_limit' with what the
-- network holds (held) and when its first hold lapses (expires_at). Otherwise the
-- answer is hold_seats', and the hold row carries the network.
--
-- p_wait false is for a batch of holds in one transaction (booking's batch.go): a
-- network whose lock another transaction has is not waited for, the answer is one row
-- 'busy', and the caller runs that hold again on its own. Waiting there could close a
-- cycle with another batch, which takes its seats' locks in another order.
-- +goose StatementBegin
CREATE FUNCTION hold_seats_client(p_event_id bigint, p_buyer text, p_seat_ids bigint[], p_ttl_seconds float8, p_limit int,
    p_client text, p_client_limit int, p_wait boolean,
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
    PERFORM set_config('boxoffice.client_key', coalesce(p_client, ''), true);
    RETURN QUERY SELECT * FROM hold_seats(p_event_id, p_buyer, p_seat_ids, p_ttl_seconds, p_limit);
    PERFORM set_config('boxoffice.client_key', '', true);
END;
$$;
-- +goose StatementEnd

-- +goose Down
DROP FUNCTION hold_seats_client(bigint, text, bigint[], float8, int, text, int, boolean);
DROP FUNCTION client_places(bigint, text);
DROP INDEX holds_client_live;
ALTER TABLE holds DROP COLUMN client_key;
