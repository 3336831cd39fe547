-- +goose Up

-- Autovacuum analyzes a table once a tenth of it (and 50 rows) has changed since it was
-- last analyzed. The sale's tables grow by the thousand a minute at an onsale, so in a
-- young database, where they are small, each is analyzed at nearly every pass of
-- autovacuum (every 10 s, .ci/services.sh): in make onsale (log_autovacuum_min_duration
-- = 0, docs/ONSALE.md) a pass vacuumed and analyzed orders, tickets, payments, holds
-- and sessions for 0.05-0.34 s of CPU, rising as they grew (the whole pass, with the
-- seats table and River's jobs, up to 0.8 s), and the sale's steps of the next seconds
-- waited hundreds of milliseconds for the cores and for pooled connections.
--
-- Those analyzes cannot simply be put off: a prepared statement's generic plan is
-- made from the statistics of the moment, and an analyze is what makes it be planned
-- again. With the analyzes put off until 100,000 rows had changed, PaymentClaim kept a
-- plan made while payments was empty and took 3.3 ms a call instead of 0.27.
--
-- So they are made cheaper instead: an analyze reads 300 rows for each unit of the
-- largest statistics target of the table's columns, 30,000 at the default of 100, and
-- works out each column's most common values and histogram from them. The sale's
-- statements find their rows by ids and keys, through indexes, and need of the
-- statistics the table's size and roughly how many distinct values a column has, which
-- a sample of 3,000 rows gives: a target of 10. A column added to these tables later
-- gets the default target again, unless its migration calls set_statistics for it.
-- +goose StatementBegin
-- set_statistics sets the statistics target of every column of the given tables.
CREATE FUNCTION set_statistics(tables regclass[], target int) RETURNS void LANGUAGE plpgsql AS $$
DECLARE c record;
BEGIN
    FOR c IN SELECT a.attrelid::regclass AS tbl, a.attname
             FROM pg_attribute a
             WHERE a.attrelid = ANY (tables) AND a.attnum > 0 AND NOT a.attisdropped
    LOOP
        EXECUTE format('ALTER TABLE %s ALTER COLUMN %I SET STATISTICS %s', c.tbl, c.attname, target);
    END LOOP;
END;
$$;
-- +goose StatementEnd
SELECT set_statistics('{orders, tickets, payments, payment_events, holds, sent_mail, sessions}', 10);

-- +goose Down
SELECT set_statistics('{orders, tickets, payments, payment_events, holds, sent_mail, sessions}', -1);
DROP FUNCTION set_statistics(regclass[], int);
