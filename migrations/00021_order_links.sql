-- +goose Up

-- The access links of orders: a link signed with the admission keys names an order and
-- a version (internal/orderlink), and opens the order only while that version is the
-- order's current one. Staff revoke an order's links by moving it on: every link
-- signed before stops working at once, and a link of the new version is sent to the
-- buyer (or not) as staff choose. An order without a row is at version 1, so that the
-- link in a confirmation email costs no write at the sale.
CREATE TABLE order_links (
    order_id   bigint PRIMARY KEY REFERENCES orders (id),
    version    integer NOT NULL CHECK (version >= 2),
    -- when staff last revoked the order's links
    revoked_at timestamptz NOT NULL DEFAULT now()
);

-- +goose Down
DROP TABLE order_links;
