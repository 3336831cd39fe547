-- +goose Up

-- Verified buyers: an onsale may ask every buyer to register an email and confirm it
-- through a link before buying, so that the waiting room gives one place per
-- confirmed email and the per-buyer limit counts per email across sessions.
ALTER TABLE events ADD COLUMN verified_only boolean NOT NULL DEFAULT false;

-- One row per address, normalised (trimmed, lower-case), so that letter case makes
-- no second buyer. buyer is the buyer id that every session confirming the address
-- takes: the first confirming session's own, set once. Two addresses confirmed in one
-- session share that session's buyer id (one limit for both, never two for one).
CREATE TABLE buyer_emails (
    id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    email      text NOT NULL UNIQUE CHECK (email = lower(email) AND length(email) BETWEEN 3 AND 254),
    buyer      text,
    created_at timestamptz NOT NULL DEFAULT now()
);

-- An address registered for one event's onsale. Only the latest link confirms it:
-- link_nonce is that link's random part, cleared when the link is used, so a link
-- works once; link_expires_at is when it stops working, by the database clock.
CREATE TABLE email_registrations (
    event_id        bigint NOT NULL REFERENCES events (id) ON DELETE CASCADE,
    email_id        bigint NOT NULL REFERENCES buyer_emails (id),
    registered_at   timestamptz NOT NULL DEFAULT now(),
    confirmed_at    timestamptz,
    link_nonce      bytea,
    link_expires_at timestamptz,
    -- how many links were sent, and when the last went: the bound on mail to one address
    links_sent      integer NOT NULL DEFAULT 0 CHECK (links_sent >= 0),
    last_link_at    timestamptz,
    PRIMARY KEY (event_id, email_id)
);

-- +goose Down
DROP TABLE email_registrations;
DROP TABLE buyer_emails;
ALTER TABLE events DROP COLUMN verified_only;
