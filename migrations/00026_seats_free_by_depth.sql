-- +goose Up

-- Best available seats a party nearest the stage's front rows: it looks at the free
-- seats in order of their distance from the stage, which the map's y is (a farther
-- row's seats all lie below a nearer row's, curved rows too), and, for a price level,
-- at one price only. The price is in the index so that a search for a price at the back
-- of the house steps over the front's free seats without reading them.
CREATE INDEX seats_free_by_depth ON seats (event_id, y, price_cents, id)
    WHERE held_by IS NULL AND sold_at IS NULL;

-- +goose Down
DROP INDEX seats_free_by_depth;
