-- +goose Up

-- The desk's money. A refund of a box-office payment (cash or a card present at the
-- window) is made at the desk, not through a provider: it is a refunds row by staff,
-- with the member who counted it out (staff_id) and when (created_at), succeeded as
-- it is recorded. The till report adds up box_office_sales and these refunds per
-- member and day.
--
-- A staff refund or void is confirmed on a page that shows what it will do; the page
-- carries a key, and the confirmation is recorded under it in the refund's
-- transaction, so that a confirmation submitted twice ends the tickets once and the
-- second answer is the first's.
CREATE TABLE staff_refund_requests (
    key          text PRIMARY KEY CHECK (length(key) BETWEEN 16 AND 64),
    order_id     bigint NOT NULL REFERENCES orders (id),
    kind         text NOT NULL CHECK (kind IN ('refund', 'void')),
    staff_id     bigint REFERENCES staff (id),
    ticket_ids   bigint[] NOT NULL,
    amount_cents integer NOT NULL CHECK (amount_cents >= 0),
    -- how the money went back: cash, card_present (at the desk), card (through the
    -- payment provider), '' when none did
    method       text NOT NULL CHECK (method IN ('', 'cash', 'card_present', 'card')),
    status       text NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now()
);

-- The till report reads sales and staff refunds by time.
CREATE INDEX box_office_sales_at ON box_office_sales (created_at);
CREATE INDEX refunds_by_staff_at ON refunds (created_at) WHERE by_staff;

-- +goose Down

DROP INDEX refunds_by_staff_at;
DROP INDEX box_office_sales_at;
DROP TABLE staff_refund_requests;
