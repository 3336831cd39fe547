-- +goose Up

-- hold_seats and hold_seats_client take p_basket, whether the seats join the buyer's
-- basket (migrations/functions/hold_seats.sql): the old signatures go, and the
-- functions folder creates the new ones after this migration.
DROP FUNCTION IF EXISTS hold_seats_client(bigint, text, bigint[], float8, int, text, int, boolean, bigint);
DROP FUNCTION IF EXISTS hold_seats(bigint, text, bigint[], float8, int, bigint);

-- +goose Down

-- The new signatures go, and the old ones come back as stubs, so that the Down
-- migrations before this one find what they replace or drop; Up puts the folder's
-- bodies back.
DROP FUNCTION IF EXISTS hold_seats_client(bigint, text, bigint[], float8, int, text, int, boolean, bigint, boolean);
DROP FUNCTION IF EXISTS hold_seats(bigint, text, bigint[], float8, int, bigint, boolean);
CREATE FUNCTION hold_seats(p_event_id bigint, p_buyer text, p_seat_ids bigint[], p_ttl_seconds float8, p_limit int,
    p_code_id bigint DEFAULT 0,
    OUT status text, OUT hold_id bigint, OUT expires_at timestamptz, OUT held int,
    OUT seat_id bigint, OUT section text, OUT row_label text, OUT number int, OUT price_cents int)
RETURNS SETOF record LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'hold_seats: migrate up'; END $$;
CREATE FUNCTION hold_seats_client(p_event_id bigint, p_buyer text, p_seat_ids bigint[], p_ttl_seconds float8, p_limit int,
    p_client text, p_client_limit int, p_wait boolean, p_code_id bigint,
    OUT status text, OUT hold_id bigint, OUT expires_at timestamptz, OUT held int,
    OUT seat_id bigint, OUT section text, OUT row_label text, OUT number int, OUT price_cents int)
RETURNS SETOF record LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'hold_seats_client: migrate up'; END $$;
DROP FUNCTION IF EXISTS buyer_basket(bigint, text);
