-- +goose Up

-- Staff holds and box-office sales (issue 8).
--
-- A staff hold (house seats, press, kills) is a hold row of a staff kind: the seats
-- are claimed by the same conditional statement as a buyer's (SeatHold), and its
-- expires_at is its automatic release time. So "released on time" is the lazy expiry
-- every claim already applies, by the database clock, and the tidy-up announces it;
-- "until released by hand" is a release time no one will live to see (booking's
-- untilReleased), not NULL: seats.hold_expires_at and holds.expires_at stay NOT NULL
-- for every statement that reads them, and 'infinity' would not scan into a Go time.
-- Its buyer is "staff:<id>", which no session's buyer (random base32) can be, so no
-- online buyer can check it out or release it.
ALTER TABLE holds
    ADD COLUMN kind text NOT NULL DEFAULT 'buyer' CHECK (kind IN ('buyer', 'house', 'press', 'kill')),
    ADD COLUMN reason text NOT NULL DEFAULT '' CHECK (length(reason) <= 500),
    ADD COLUMN staff_id bigint REFERENCES staff (id),
    ADD CONSTRAINT holds_staff_kind CHECK ((kind = 'buyer') = (staff_id IS NULL));
-- The staff holds of an event still in force, as the staff seat map lists them.
CREATE INDEX holds_staff ON holds (event_id, id)
    WHERE kind <> 'buyer' AND released_at IS NULL AND sold_at IS NULL;

-- A sale at the box office: the order it made (held, paid and confirmed in one
-- transaction), who sold it, how it was paid and to whom. The form's token is the
-- key: a form submitted twice sells once.
CREATE TABLE box_office_sales (
    event_id   bigint NOT NULL REFERENCES events (id),
    token      text NOT NULL CHECK (length(token) BETWEEN 16 AND 64),
    order_id   bigint NOT NULL UNIQUE REFERENCES orders (id),
    staff_id   bigint NOT NULL REFERENCES staff (id),
    method     text NOT NULL CHECK (method IN ('cash', 'card_present')),
    buyer_name text NOT NULL DEFAULT '' CHECK (length(buyer_name) <= 200),
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (event_id, token)
);

-- +goose Down
DROP TABLE box_office_sales;
-- Without staff holds their seats are plain free seats again.
UPDATE seats s SET held_by = NULL, hold_expires_at = NULL
FROM holds h
WHERE h.kind <> 'buyer' AND s.event_id = h.event_id AND s.held_by = h.id AND s.sold_at IS NULL;
DELETE FROM holds WHERE kind <> 'buyer';
ALTER TABLE holds DROP CONSTRAINT holds_staff_kind, DROP COLUMN staff_id, DROP COLUMN reason, DROP COLUMN kind;
