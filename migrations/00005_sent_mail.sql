-- +goose Up

-- Emails handed to the mail server (issue 7). A server that accepted an email cannot
-- be asked to forget it, and River marks the sending job completed only afterwards:
-- a crash in between would have the job run again and send the email twice. So the
-- job claims the email here before sending (a transaction of its own) and marks it
-- sent right after, in the transaction that completes the job; a retry that finds it
-- sent completes without sending. Only a crash between the server's acceptance and
-- that commit still resends, with the same Message-ID (see internal/mail).
CREATE TABLE sent_mail (
    -- the email's Message-ID, made from its order and kind (order-7.confirmation@host),
    -- the same every time the email is made
    message_id text PRIMARY KEY,
    order_id   bigint NOT NULL,
    kind       text NOT NULL,
    -- how many times a job claimed it: above one, a sending was cut short
    attempts   integer NOT NULL DEFAULT 1,
    claimed_at timestamptz NOT NULL DEFAULT now(),
    -- when the mail server accepted it; NULL while claimed only
    sent_at    timestamptz
);
CREATE INDEX sent_mail_order ON sent_mail (order_id);

-- +goose Down
DROP TABLE sent_mail;
