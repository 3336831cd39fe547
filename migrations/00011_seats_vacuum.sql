-- +goose Up

-- Best available finds free seats through partial indexes of untouched seats
-- (seats_free_by_price, seats_free_by_section). A seat that is held or sold leaves a
-- dead entry at the head of those indexes until the table is vacuumed, and at an
-- onsale the head is exactly where every search starts: with 22,000 dead rows in a
-- 50,000-seat event the search read 200 pages and took 2.6 ms, after a VACUUM 7 pages
-- and 0.04 ms. So the seats table is vacuumed after every 2,000 changed rows, however
-- big it is, without the cost-based pauses. (How soon autovacuum looks is
-- autovacuum_naptime, a server setting: docs/ONSALE.md.)
ALTER TABLE seats SET (
    autovacuum_vacuum_scale_factor = 0,
    autovacuum_vacuum_threshold = 2000,
    autovacuum_vacuum_cost_delay = 0
);

-- +goose Down
ALTER TABLE seats RESET (autovacuum_vacuum_scale_factor, autovacuum_vacuum_threshold, autovacuum_vacuum_cost_delay);
