-- +goose Up

-- The voucher a buyer entered in a basket. It is kept beside the hold, as the lines'
-- types are, so entering or clearing one never touches the seat claim; checkout reads
-- it, prices the order with it and redeems it in the order's transaction.
CREATE TABLE hold_vouchers (
    event_id   bigint NOT NULL,
    hold_id    bigint NOT NULL,
    voucher_id bigint NOT NULL,
    PRIMARY KEY (event_id, hold_id),
    FOREIGN KEY (event_id, hold_id) REFERENCES holds (event_id, id),
    FOREIGN KEY (event_id, voucher_id) REFERENCES vouchers (event_id, id)
);

-- +goose Down
DROP TABLE hold_vouchers;
