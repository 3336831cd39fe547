-- Presales. An access code opens its event's sale to the buyers who entered it, from
-- its presale_starts_at to its presale_ends_at, before the public onsale, for at most
-- its quota of places. A hold made with an open code records it
-- (holds.access_code_id), and its places count against the quota from then on: while
-- the hold lives, and once bought. Only the database clock decides, as for the public
-- window (sales_window.sql).
--
-- The quota is decided like the buyer limit: the holding statement takes the code's
-- advisory lock (access_code_lock), then counts (hold_presale, whose count sees every
-- hold committed before the lock was granted) and claims in the same transaction, so
-- however many buyers race, the places recorded under a code never pass its quota.
-- Locks are taken in one order everywhere: the buyer's basket lock, the client
-- network's, hold rows (by id), the code's, then the buyer's.

-- access_code_open: the code opens its presale now: not paused, inside its window.
CREATE OR REPLACE FUNCTION access_code_open(c access_codes) RETURNS boolean
LANGUAGE sql STABLE AS $$
    SELECT NOT c.paused AND now() >= c.presale_starts_at AND now() < c.presale_ends_at
$$;

-- access_code_lock serialises the holds made under one code for the rest of the
-- transaction. A hash collision only serialises two codes, never wrongly admits one.
CREATE OR REPLACE FUNCTION access_code_lock(p_event_id bigint, p_code_id bigint) RETURNS void
LANGUAGE sql VOLATILE AS $$
    SELECT pg_advisory_xact_lock(hashtextextended('code/' || p_code_id, p_event_id))
$$;

-- access_code_places: the places of the holds that record the code, bought or live now.
-- PL/pgSQL for its kept plan, as buyer_places.
CREATE OR REPLACE FUNCTION access_code_places(p_event_id bigint, p_code_id bigint) RETURNS int
LANGUAGE plpgsql STABLE AS $$
BEGIN
    RETURN (SELECT coalesce(sum(h.seat_count + h.ga_quantity), 0)::int
            FROM holds h
            WHERE h.event_id = p_event_id AND h.access_code_id = p_code_id
              AND (h.sold_at IS NOT NULL OR hold_is_live(h)));
END;
$$;

-- hold_presale: what access code p_code_id (0: none) does for p_places more places on
-- the event whose sale stands at p_window (event_sale_state), read after the code's
-- lock. status 'on_sale' lets the places be held, recording code_id (NULL: the public
-- sale, no code); any other status refuses them: the window's own ('not_on_sale',
-- 'closed'), or 'presale_quota' when the code opens the presale but its quota has not
-- the places left.
--
-- Before the onsale only an open code of this event opens the sale. After it, a new
-- hold records the code if it is open and has the places, and is public otherwise.
-- p_bound says the places join a hold that records the code already: their places
-- must then fit the quota whatever the window (its places are the code's), and after
-- the onsale the code need not be open any more.
--
-- The quota is compared with the larger of the places of the code's holds and its
-- places_used (what confirmed orders took, AccessCodeUse), so a hold it admits is
-- never refused by that count at confirmation.
CREATE OR REPLACE FUNCTION hold_presale(p_event_id bigint, p_window text, p_code_id bigint, p_places int, p_bound boolean,
    OUT status text, OUT code_id bigint)
LANGUAGE plpgsql STABLE AS $$
DECLARE
    c access_codes;
BEGIN
    status := p_window;
    IF p_code_id = 0 OR p_window NOT IN ('on_sale', 'not_on_sale') THEN
        RETURN;
    END IF;
    SELECT * INTO c FROM access_codes a WHERE a.event_id = p_event_id AND a.id = p_code_id;
    IF NOT FOUND OR NOT (access_code_open(c) OR (p_bound AND p_window = 'on_sale')) THEN
        RETURN;
    END IF;
    IF c.quota IS NOT NULL
       AND greatest(c.places_used, access_code_places(p_event_id, c.id)) + p_places > c.quota THEN
        IF p_window = 'not_on_sale' OR p_bound THEN
            status := 'presale_quota';
        END IF;
        RETURN;
    END IF;
    status := 'on_sale';
    code_id := c.id;
END;
$$;
