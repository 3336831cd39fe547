-- +goose Up

-- The functions whose current body lives in migrations/functions/ (the rules a reader
-- looks up: when a hold is live, the sales window, the buyers' counts, hold_seats) are
-- applied by migrations.Up after the numbered migrations, all of them in one
-- transaction, whenever those files changed or a numbered migration ran. This row
-- remembers which files were applied last (a hash of their names and contents), so
-- that an instance starting with the same files leaves the functions, and the plans
-- that depend on them, alone. The numbered migrations that created them keep their
-- history; on a fresh database the functions folder replaces those bodies.
CREATE TABLE function_files (
    one        boolean PRIMARY KEY DEFAULT true CHECK (one),
    hash       text NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT now()
);

-- +goose Down

-- Going down forgets the record, so that the next Up applies the folder again over
-- whatever bodies the Down migrations put back.
DROP TABLE function_files;
