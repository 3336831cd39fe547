-- +goose Up

-- At an onsale every seat changes two or three times in a few minutes, so autovacuum's
-- default (analyze after a tenth of the rows changed) analyzed the seats table every
-- autovacuum_naptime (10 s in .ci/services.sh): 0.11-0.24 s each time on a 50,000-seat
-- stadium (log_autovacuum_min_duration = 0 during make onsale), in a burst with the
-- other tables' vacuums, and the holds of such a second were slower. What the planner
-- knows of seats (their events, sections, prices) does not change when seats are held
-- or sold, and the searches go through partial indexes whatever the statistics say; a
-- new event's seats still get the table analyzed, half its size being new.
ALTER TABLE seats SET (autovacuum_analyze_scale_factor = 0.5);

-- +goose Down
ALTER TABLE seats RESET (autovacuum_analyze_scale_factor);
