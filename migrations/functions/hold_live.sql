-- When a hold is live. A hold lapses at its expiry by the database clock (now(), the
-- transaction's start), whether or not the tidy-up has run: a lapsed hold keeps
-- nothing, and its seats are free to every statement that reads them. These are the
-- only places that compare an expiry with now(); every query and function asks them.
--
-- They are SQL functions of one expression, without SET, STRICT or SECURITY DEFINER
-- and no more volatile than now() (STABLE): PostgreSQL inlines them into the statement
-- that calls them, which is then planned as if the expression were written out, so the
-- partial indexes on seats and holds still match (internal/db/plans_test.go).

-- seat_is_free: nobody owns the seat and nobody holds it now. Every claim of a seat
-- carries it in its WHERE clause.
CREATE OR REPLACE FUNCTION seat_is_free(s seats) RETURNS boolean
LANGUAGE sql STABLE AS $$
    SELECT s.sold_at IS NULL AND (s.held_by IS NULL OR s.hold_expires_at <= now())
$$;

-- seat_is_held: a hold that has not lapsed keeps the seat (its held_by says which).
-- A sold seat is held by nobody: the seats table's CHECK clears held_by on a sale.
CREATE OR REPLACE FUNCTION seat_is_held(s seats) RETURNS boolean
LANGUAGE sql STABLE AS $$
    SELECT s.held_by IS NOT NULL AND s.hold_expires_at > now()
$$;

-- seat_status: the seat's status as every map shows it: 'sold', 'held' (a hold that
-- has not lapsed) or 'available'. The whole map, some of its seats and the drift
-- check's compact read all ask it, so they cannot disagree.
CREATE OR REPLACE FUNCTION seat_status(s seats) RETURNS text
LANGUAGE sql STABLE AS $$
    SELECT CASE
               WHEN s.sold_at IS NOT NULL THEN 'sold'
               WHEN seat_is_held(s) THEN 'held'
               ELSE 'available'
           END
$$;

-- seat_hold_lapsed: the seat still names a hold that has lapsed: free, but not yet
-- tidied (the index seats_held_expiry finds these).
CREATE OR REPLACE FUNCTION seat_hold_lapsed(s seats) RETURNS boolean
LANGUAGE sql STABLE AS $$
    SELECT s.held_by IS NOT NULL AND s.hold_expires_at <= now()
$$;

-- hold_is_live: the hold keeps its seats and places: neither released nor sold, and
-- not lapsed.
CREATE OR REPLACE FUNCTION hold_is_live(h holds) RETURNS boolean
LANGUAGE sql STABLE AS $$
    SELECT h.released_at IS NULL AND h.sold_at IS NULL AND h.expires_at > now()
$$;

-- hold_lapsed: the hold ran out, neither released nor sold first: what the tidy-up
-- gives back (the index holds_ga_lapsing finds the general-admission ones).
CREATE OR REPLACE FUNCTION hold_lapsed(h holds) RETURNS boolean
LANGUAGE sql STABLE AS $$
    SELECT h.released_at IS NULL AND h.sold_at IS NULL AND h.expires_at <= now()
$$;
