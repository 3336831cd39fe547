-- +goose Up

-- A hold made in a presale records the access code that opened the sale to it, so that
-- the code's quota (hold_presale, migrations/functions/presale.sql) counts the places
-- of its holds, checkout and payment know the presale, and pricing knows the type the
-- code reveals. NULL: a public hold.
ALTER TABLE holds ADD COLUMN access_code_id bigint;
ALTER TABLE holds ALTER COLUMN access_code_id SET STATISTICS 10; -- as the sale tables' other columns (00014)
ALTER TABLE holds ADD CONSTRAINT holds_access_code
    FOREIGN KEY (event_id, access_code_id) REFERENCES access_codes (event_id, id);
-- access_code_places reads the code's holds, bought or live, by this index.
CREATE INDEX holds_access_code ON holds (event_id, access_code_id)
    INCLUDE (seat_count, ga_quantity, expires_at) WHERE access_code_id IS NOT NULL;

-- The holding functions take the code as a new argument: the old signatures go, and
-- the functions folder creates the new ones after this migration.
DROP FUNCTION IF EXISTS hold_add_seats(bigint, text, bigint, bigint[], float8, int, text, int);
DROP FUNCTION IF EXISTS hold_seats_client(bigint, text, bigint[], float8, int, text, int, boolean);
DROP FUNCTION IF EXISTS hold_seats(bigint, text, bigint[], float8, int);

-- +goose Down

-- The new signatures go, and the old ones come back as stubs, so that the Down
-- migrations before this one find what they replace or drop; Up puts the folder's
-- bodies back.
DROP FUNCTION IF EXISTS hold_add_seats(bigint, text, bigint, bigint[], float8, int, text, int, bigint);
DROP FUNCTION IF EXISTS hold_seats_client(bigint, text, bigint[], float8, int, text, int, boolean, bigint);
DROP FUNCTION IF EXISTS hold_seats(bigint, text, bigint[], float8, int, bigint);
CREATE FUNCTION hold_seats(p_event_id bigint, p_buyer text, p_seat_ids bigint[], p_ttl_seconds float8, p_limit int,
    OUT status text, OUT hold_id bigint, OUT expires_at timestamptz, OUT held int,
    OUT seat_id bigint, OUT section text, OUT row_label text, OUT number int, OUT price_cents int)
RETURNS SETOF record LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'hold_seats: migrate up'; END $$;
CREATE FUNCTION hold_seats_client(p_event_id bigint, p_buyer text, p_seat_ids bigint[], p_ttl_seconds float8, p_limit int,
    p_client text, p_client_limit int, p_wait boolean,
    OUT status text, OUT hold_id bigint, OUT expires_at timestamptz, OUT held int,
    OUT seat_id bigint, OUT section text, OUT row_label text, OUT number int, OUT price_cents int)
RETURNS SETOF record LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'hold_seats_client: migrate up'; END $$;
DROP FUNCTION IF EXISTS hold_presale(bigint, text, bigint, int, boolean);
DROP FUNCTION IF EXISTS access_code_places(bigint, bigint);
DROP FUNCTION IF EXISTS access_code_lock(bigint, bigint);
DROP FUNCTION IF EXISTS access_code_open(access_codes);
DROP FUNCTION IF EXISTS event_on_sale_with(events, bigint);
DROP INDEX holds_access_code;
ALTER TABLE holds DROP COLUMN access_code_id;
