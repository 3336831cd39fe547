-- +goose Up

-- Orders and the door (issue 8): staff refunds and voids of whole orders or single
-- tickets, the door's check-in with its log, and order search.

-- A ticket's end, when staff end it: why (refund: money back; void: none, e.g. a comp
-- or cash handled outside), by whom, and the refund that paid it back. A check-in says
-- at which gate and by whom.
ALTER TABLE tickets
    ADD COLUMN void_reason     text CHECK (void_reason IN ('refund', 'void')),
    ADD COLUMN voided_by       bigint REFERENCES staff (id),
    ADD COLUMN refund_id       bigint REFERENCES refunds (id),
    ADD COLUMN checked_in_gate text,
    ADD COLUMN checked_in_by   bigint REFERENCES staff (id),
    ADD CONSTRAINT tickets_checked_in_gate CHECK ((checked_in_at IS NULL) = (checked_in_gate IS NULL));

-- A payment may now be refunded in parts, by staff, one refund per set of tickets.
-- The automatic refund of a payment that sold nothing stays exactly once per payment.
-- What all the refunds of one payment add up to is bounded by the staff refund's own
-- statement (RefundCreateForTickets) and checked by the money invariants.
ALTER TABLE refunds
    ADD COLUMN by_staff boolean NOT NULL DEFAULT false,
    ADD COLUMN staff_id bigint REFERENCES staff (id);
ALTER TABLE refunds DROP CONSTRAINT refunds_payment_id_key;
CREATE UNIQUE INDEX refunds_one_automatic_per_payment ON refunds (payment_id) WHERE NOT by_staff;
CREATE INDEX refunds_payment ON refunds (payment_id);

-- Every scan at the door, whatever its answer: who, when, at which gate, what. The
-- check-in export reads it.
CREATE TABLE checkins (
    id        bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    at        timestamptz NOT NULL DEFAULT now(),
    event_id  bigint NOT NULL REFERENCES events (id),
    staff_id  bigint REFERENCES staff (id),
    gate      text NOT NULL CHECK (length(gate) BETWEEN 1 AND 40),
    -- what was typed or scanned, capped by the handler
    code      text NOT NULL,
    ticket_id bigint,
    result    text NOT NULL CHECK (result IN ('valid', 'used', 'void', 'wrong_event', 'unknown'))
);
CREATE INDEX checkins_event ON checkins (event_id, id);

-- Order search by the start of an email, case-insensitively.
CREATE INDEX orders_email ON orders (lower(email) text_pattern_ops);

-- An order's history on its page: the audit entries about it.
CREATE INDEX audit_log_subject ON audit_log (subject, id);

-- +goose Down
DROP INDEX audit_log_subject;
DROP INDEX orders_email;
DROP TABLE checkins;
DROP INDEX refunds_payment;
DROP INDEX refunds_one_automatic_per_payment;
ALTER TABLE refunds DROP COLUMN staff_id, DROP COLUMN by_staff;
ALTER TABLE refunds ADD CONSTRAINT refunds_payment_id_key UNIQUE (payment_id);
ALTER TABLE tickets
    DROP CONSTRAINT tickets_checked_in_gate,
    DROP COLUMN checked_in_by,
    DROP COLUMN checked_in_gate,
    DROP COLUMN refund_id,
    DROP COLUMN voided_by,
    DROP COLUMN void_reason;
