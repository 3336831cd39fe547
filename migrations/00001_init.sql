-- +goose Up

-- Every table that holds inventory (seats, holds, GA stripes, tickets) leads its key with
-- event_id, and every statement on them names one event: the schema can be distributed
-- by event without rewriting a query.

CREATE TABLE venues (
    id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    name       text NOT NULL CHECK (name <> ''),
    city       text NOT NULL DEFAULT '',
    created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE events (
    id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    venue_id   bigint NOT NULL REFERENCES venues (id),
    slug       text NOT NULL UNIQUE CHECK (slug ~ '^[a-z0-9][a-z0-9-]*$'),
    name       text NOT NULL CHECK (name <> ''),
    starts_at  timestamptz NOT NULL,
    onsale_at  timestamptz NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE price_tiers (
    event_id    bigint NOT NULL REFERENCES events (id),
    id          bigint GENERATED ALWAYS AS IDENTITY,
    name        text NOT NULL,
    price_cents integer NOT NULL CHECK (price_cents >= 0),
    PRIMARY KEY (event_id, id)
);

-- The seat row is the only authority on who holds or owns a seat. A hold is
-- held_by + hold_expires_at, written by the statement that claims the seat; a hold whose
-- hold_expires_at has passed is free to every statement, whether or not the tidy-up ran.
-- held_by carries no foreign key on purpose: the hot claim must not take a KEY SHARE
-- lock on the hold's bookkeeping row.
CREATE TABLE seats (
    event_id        bigint NOT NULL REFERENCES events (id),
    id              bigint GENERATED ALWAYS AS IDENTITY,
    section         text NOT NULL,
    row_label       text NOT NULL,
    number          integer NOT NULL CHECK (number > 0),
    price_tier_id   bigint NOT NULL,
    price_cents     integer NOT NULL CHECK (price_cents >= 0),
    -- lower is better within a price: orders best-available
    rank            integer NOT NULL DEFAULT 0,
    x               integer NOT NULL DEFAULT 0,
    y               integer NOT NULL DEFAULT 0,
    accessible      boolean NOT NULL DEFAULT false,
    held_by         bigint,
    hold_expires_at timestamptz,
    sold_at         timestamptz,
    order_id        bigint,
    PRIMARY KEY (event_id, id),
    UNIQUE (event_id, section, row_label, number),
    FOREIGN KEY (event_id, price_tier_id) REFERENCES price_tiers (event_id, id),
    CHECK ((held_by IS NULL) = (hold_expires_at IS NULL)),
    CHECK ((sold_at IS NULL) = (order_id IS NULL)),
    CHECK (sold_at IS NULL OR held_by IS NULL)
);

-- Best available walks only seats that nobody has touched: with the cheapest 20,000
-- seats held, a plain index would step over every held row on each search.
CREATE INDEX seats_free_by_price ON seats (event_id, price_cents, rank, id)
    WHERE held_by IS NULL AND sold_at IS NULL;
CREATE INDEX seats_free_by_section ON seats (event_id, section, price_cents, rank, id)
    WHERE held_by IS NULL AND sold_at IS NULL;
-- Holds that may have lapsed: the tidy-up and best available's second look.
CREATE INDEX seats_held_expiry ON seats (event_id, hold_expires_at)
    WHERE held_by IS NOT NULL;
CREATE INDEX seats_held_by ON seats (event_id, held_by) WHERE held_by IS NOT NULL;
CREATE INDEX seats_order ON seats (event_id, order_id) WHERE order_id IS NOT NULL;

-- General admission: capacity is a number, striped across rows so one row is not the
-- hot spot. The CHECK is the whole guarantee: no code path can take a place that is
-- not there.
CREATE TABLE ga_tiers (
    event_id    bigint NOT NULL REFERENCES events (id),
    id          bigint GENERATED ALWAYS AS IDENTITY,
    name        text NOT NULL,
    price_cents integer NOT NULL CHECK (price_cents >= 0),
    capacity    integer NOT NULL CHECK (capacity >= 0),
    stripes     integer NOT NULL CHECK (stripes BETWEEN 1 AND 64),
    PRIMARY KEY (event_id, id)
);

CREATE TABLE ga_stripes (
    event_id  bigint NOT NULL,
    tier_id   bigint NOT NULL,
    stripe    integer NOT NULL,
    remaining integer NOT NULL CHECK (remaining >= 0),
    PRIMARY KEY (event_id, tier_id, stripe),
    FOREIGN KEY (event_id, tier_id) REFERENCES ga_tiers (event_id, id)
);

-- Holds are bookkeeping: who asked, for how many, until when. The seat rows (or the GA
-- stripes) are what is actually taken.
CREATE TABLE holds (
    event_id    bigint NOT NULL REFERENCES events (id),
    id          bigint GENERATED ALWAYS AS IDENTITY,
    buyer       text NOT NULL,
    seat_count  integer NOT NULL DEFAULT 0 CHECK (seat_count >= 0),
    ga_tier_id  bigint,
    ga_quantity integer NOT NULL DEFAULT 0 CHECK (ga_quantity >= 0),
    expires_at  timestamptz NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now(),
    -- released by its buyer, or (GA) its places given back by the tidy-up after it lapsed
    released_at timestamptz,
    -- its order was confirmed
    sold_at     timestamptz,
    PRIMARY KEY (event_id, id),
    CHECK (released_at IS NULL OR sold_at IS NULL)
);
CREATE INDEX holds_buyer ON holds (event_id, buyer);
CREATE INDEX holds_ga_lapsing ON holds (event_id, expires_at)
    WHERE ga_quantity > 0 AND released_at IS NULL AND sold_at IS NULL;

-- Which stripes a GA hold took its places from, so that giving them back is exact.
CREATE TABLE hold_ga_places (
    event_id bigint NOT NULL,
    hold_id  bigint NOT NULL,
    tier_id  bigint NOT NULL,
    stripe   integer NOT NULL,
    quantity integer NOT NULL CHECK (quantity > 0),
    PRIMARY KEY (event_id, hold_id, tier_id, stripe),
    FOREIGN KEY (event_id, hold_id) REFERENCES holds (event_id, id)
);

CREATE TYPE order_status AS ENUM ('pending', 'confirmed', 'refund_pending', 'refunded');

CREATE TABLE orders (
    id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    event_id      bigint NOT NULL REFERENCES events (id),
    hold_id       bigint NOT NULL,
    buyer         text NOT NULL,
    email         text NOT NULL,
    seat_ids      bigint[] NOT NULL DEFAULT '{}',
    ga_tier_id    bigint,
    ga_quantity   integer NOT NULL DEFAULT 0,
    amount_cents  integer NOT NULL CHECK (amount_cents >= 0),
    status        order_status NOT NULL DEFAULT 'pending',
    status_reason text NOT NULL DEFAULT '',
    payment_id    text,
    -- when the payment under way started; a claim left by a crashed request expires
    payment_started_at timestamptz,
    created_at    timestamptz NOT NULL DEFAULT now(),
    updated_at    timestamptz NOT NULL DEFAULT now(),
    confirmed_at  timestamptz,
    UNIQUE (event_id, hold_id),
    FOREIGN KEY (event_id, hold_id) REFERENCES holds (event_id, id)
);

ALTER TABLE seats ADD FOREIGN KEY (order_id) REFERENCES orders (id);

-- One ticket per sold seat (or GA place), with an unguessable code for the door.
CREATE TABLE tickets (
    event_id      bigint NOT NULL REFERENCES events (id),
    id            bigint GENERATED ALWAYS AS IDENTITY,
    order_id      bigint NOT NULL REFERENCES orders (id),
    seat_id       bigint,
    ga_tier_id    bigint,
    code          text NOT NULL UNIQUE,
    created_at    timestamptz NOT NULL DEFAULT now(),
    voided_at     timestamptz,
    checked_in_at timestamptz,
    PRIMARY KEY (event_id, id),
    CHECK ((seat_id IS NULL) <> (ga_tier_id IS NULL))
);
-- The backstop: whatever the code does, a seat has at most one valid ticket.
CREATE UNIQUE INDEX tickets_one_valid_per_seat ON tickets (event_id, seat_id)
    WHERE voided_at IS NULL AND seat_id IS NOT NULL;
CREATE INDEX tickets_order ON tickets (event_id, order_id);

-- Provider event ids, recorded in the transaction that acts on them: a webhook delivered
-- twice is acted on once.
CREATE TABLE payment_events (
    provider    text NOT NULL,
    event_id    text NOT NULL,
    type        text NOT NULL,
    order_id    bigint,
    received_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (provider, event_id)
);

CREATE TABLE staff_users (
    id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    email         text NOT NULL UNIQUE,
    name          text NOT NULL,
    password_hash text NOT NULL,
    created_at    timestamptz NOT NULL DEFAULT now()
);

-- scs sessions, in PostgreSQL so that flushing Redis neither loses a hold nor logs
-- staff out.
CREATE TABLE sessions (
    token  text PRIMARY KEY,
    data   bytea NOT NULL,
    expiry timestamptz NOT NULL
);
CREATE INDEX sessions_expiry ON sessions (expiry);

-- +goose Down
DROP TABLE sessions, staff_users, payment_events, tickets;
ALTER TABLE seats DROP CONSTRAINT seats_order_id_fkey;
DROP TABLE orders, hold_ga_places, holds, ga_stripes, ga_tiers, seats, price_tiers, events, venues;
DROP TYPE order_status;
