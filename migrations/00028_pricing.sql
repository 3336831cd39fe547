-- +goose Up

-- Ticket types, fees, tax, vouchers and access codes: what a ticket costs. Money is in
-- integer minor units everywhere; every price is tax-inclusive.
--
-- An event without ticket types sells as before, at the seat's (or GA tier's) own
-- price_cents: no row here is needed for the existing events, and no default type can
-- drift from the prices the seats carry. Once an event has a type, every line carries
-- one, priced by ticket_type_prices.
--
-- None of these tables decides who holds a seat: the seat row stays the only authority.
-- A basket line's type is kept beside the hold (hold_seat_types, hold_ga_types), so
-- changing it never touches the claim.

-- Tax per event (basis points, prices tax-inclusive). A table of its own keeps the hot
-- events row, and every query that reads it, as it is.
CREATE TABLE event_pricing (
    event_id    bigint PRIMARY KEY REFERENCES events (id),
    tax_rate_bp integer NOT NULL DEFAULT 0 CHECK (tax_rate_bp BETWEEN 0 AND 10000),
    tax_label   text NOT NULL DEFAULT 'VAT' CHECK (length(tax_label) BETWEEN 1 AND 40),
    updated_at  timestamptz NOT NULL DEFAULT now()
);

-- Fees per event: the 'all' row applies to every payment method; a method's row adds
-- to it for that method ('online' is the payment provider, 'cash' and 'card_present'
-- the window, as box_office_sales.method names them).
CREATE TABLE event_fees (
    event_id         bigint NOT NULL REFERENCES events (id),
    method           text NOT NULL CHECK (method IN ('all', 'online', 'cash', 'card_present')),
    per_ticket_cents integer NOT NULL DEFAULT 0 CHECK (per_ticket_cents BETWEEN 0 AND 10000000),
    per_order_cents  integer NOT NULL DEFAULT 0 CHECK (per_order_cents BETWEEN 0 AND 10000000),
    PRIMARY KEY (event_id, method)
);

-- "Adult" is a flag the organiser sets on types (counts_as_adult): a type that
-- needs_adult sells only in an order with a line of such a type.
CREATE TABLE ticket_types (
    event_id        bigint NOT NULL REFERENCES events (id),
    id              bigint GENERATED ALWAYS AS IDENTITY,
    name            text NOT NULL CHECK (length(name) BETWEEN 1 AND 60),
    position        integer NOT NULL DEFAULT 0,
    -- NULL: no cap
    max_per_order   integer CHECK (max_per_order > 0),
    counts_as_adult boolean NOT NULL DEFAULT false,
    needs_adult     boolean NOT NULL DEFAULT false,
    -- sold only at the window (companion seats with wheelchair spaces)
    desk_only       boolean NOT NULL DEFAULT false,
    -- offered only to holders of an access code that reveals it (a member price)
    code_only       boolean NOT NULL DEFAULT false,
    paused          boolean NOT NULL DEFAULT false,
    created_at      timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (event_id, id),
    UNIQUE (event_id, name),
    CHECK (NOT (needs_adult AND counts_as_adult))
);

-- A type's price at a price level: a seats' price tier or a GA tier. A type without a
-- price at a level is not offered there.
CREATE TABLE ticket_type_prices (
    event_id      bigint NOT NULL,
    type_id       bigint NOT NULL,
    price_tier_id bigint,
    ga_tier_id    bigint,
    price_cents   integer NOT NULL CHECK (price_cents BETWEEN 0 AND 100000000),
    CHECK ((price_tier_id IS NULL) <> (ga_tier_id IS NULL)),
    FOREIGN KEY (event_id, type_id) REFERENCES ticket_types (event_id, id) ON DELETE CASCADE,
    FOREIGN KEY (event_id, price_tier_id) REFERENCES price_tiers (event_id, id),
    FOREIGN KEY (event_id, ga_tier_id) REFERENCES ga_tiers (event_id, id)
);
CREATE UNIQUE INDEX ticket_type_prices_seat ON ticket_type_prices (event_id, type_id, price_tier_id)
    WHERE price_tier_id IS NOT NULL;
CREATE UNIQUE INDEX ticket_type_prices_ga ON ticket_type_prices (event_id, type_id, ga_tier_id)
    WHERE ga_tier_id IS NOT NULL;

-- Vouchers: a fixed amount or a percentage off, for some types (none listed: all).
-- used counts redemptions, raised only by the conditional redemption (VoucherRedeem);
-- the CHECK backstops it as the GA stripes' CHECK backstops their counter.
CREATE TABLE vouchers (
    event_id         bigint NOT NULL REFERENCES events (id),
    id               bigint GENERATED ALWAYS AS IDENTITY,
    -- stored upper-cased; buyers' input is upper-cased before it is looked up
    code             text NOT NULL CHECK (code ~ '^[A-Z0-9][A-Z0-9-]{2,39}$'),
    amount_off_cents integer CHECK (amount_off_cents > 0),
    percent_off_bp   integer CHECK (percent_off_bp BETWEEN 1 AND 10000),
    type_ids         bigint[] NOT NULL DEFAULT '{}',
    -- NULL: no limit
    usage_limit      integer CHECK (usage_limit > 0),
    used             integer NOT NULL DEFAULT 0 CHECK (used >= 0),
    valid_from       timestamptz,
    valid_until      timestamptz,
    paused           boolean NOT NULL DEFAULT false,
    created_at       timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (event_id, id),
    UNIQUE (event_id, code),
    CHECK ((amount_off_cents IS NULL) <> (percent_off_bp IS NULL)),
    CHECK (usage_limit IS NULL OR used <= usage_limit),
    CHECK (valid_until IS NULL OR valid_from IS NULL OR valid_until > valid_from)
);

-- Access codes open a presale window before the public onsale, with their own quota of
-- places, and may reveal a code-only type.
CREATE TABLE access_codes (
    event_id          bigint NOT NULL REFERENCES events (id),
    id                bigint GENERATED ALWAYS AS IDENTITY,
    code              text NOT NULL CHECK (code ~ '^[A-Z0-9][A-Z0-9-]{2,39}$'),
    presale_starts_at timestamptz NOT NULL,
    presale_ends_at   timestamptz NOT NULL,
    -- NULL: no quota
    quota             integer CHECK (quota > 0),
    places_used       integer NOT NULL DEFAULT 0 CHECK (places_used >= 0),
    reveals_type_id   bigint,
    paused            boolean NOT NULL DEFAULT false,
    created_at        timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (event_id, id),
    UNIQUE (event_id, code),
    FOREIGN KEY (event_id, reveals_type_id) REFERENCES ticket_types (event_id, id),
    CHECK (presale_ends_at > presale_starts_at),
    CHECK (quota IS NULL OR places_used <= quota)
);

-- The type a buyer chose for a held seat, or how many GA places of a hold are of each
-- type. A row whose seat the hold no longer holds is ignored by whoever reads it (the
-- read joins the seat row, which decides).
CREATE TABLE hold_seat_types (
    event_id bigint NOT NULL,
    hold_id  bigint NOT NULL,
    seat_id  bigint NOT NULL,
    type_id  bigint NOT NULL,
    PRIMARY KEY (event_id, hold_id, seat_id),
    FOREIGN KEY (event_id, hold_id) REFERENCES holds (event_id, id),
    FOREIGN KEY (event_id, type_id) REFERENCES ticket_types (event_id, id)
);
CREATE TABLE hold_ga_types (
    event_id   bigint NOT NULL,
    hold_id    bigint NOT NULL,
    ga_tier_id bigint NOT NULL,
    type_id    bigint NOT NULL,
    quantity   integer NOT NULL CHECK (quantity > 0),
    PRIMARY KEY (event_id, hold_id, ga_tier_id, type_id),
    FOREIGN KEY (event_id, hold_id) REFERENCES holds (event_id, id),
    FOREIGN KEY (event_id, type_id) REFERENCES ticket_types (event_id, id)
);

-- What an order charged, line by line: a ticket (its seat or GA place) or the order
-- fee. total_cents = price_cents + fee_cents - discount_cents; tax_cents is included
-- in it. The lines' totals sum to the order's amount.
CREATE TABLE order_lines (
    event_id       bigint NOT NULL,
    order_id       bigint NOT NULL REFERENCES orders (id),
    line           integer NOT NULL CHECK (line > 0),
    kind           text NOT NULL CHECK (kind IN ('ticket', 'order_fee')),
    seat_id        bigint,
    ga_tier_id     bigint,
    type_id        bigint,
    label          text NOT NULL,
    price_cents    integer NOT NULL CHECK (price_cents >= 0),
    fee_cents      integer NOT NULL CHECK (fee_cents >= 0),
    discount_cents integer NOT NULL CHECK (discount_cents >= 0 AND discount_cents <= price_cents),
    tax_cents      integer NOT NULL CHECK (tax_cents >= 0),
    total_cents    integer NOT NULL CHECK (total_cents = price_cents + fee_cents - discount_cents),
    PRIMARY KEY (event_id, order_id, line),
    CHECK (kind = 'ticket' OR (seat_id IS NULL AND ga_tier_id IS NULL AND type_id IS NULL))
);

-- A voucher used by an order, and the places an order took of an access code's quota:
-- one of each at most per order, written with the conditional counter update.
CREATE TABLE voucher_redemptions (
    event_id       bigint NOT NULL,
    order_id       bigint PRIMARY KEY REFERENCES orders (id),
    voucher_id     bigint NOT NULL,
    discount_cents integer NOT NULL CHECK (discount_cents >= 0),
    redeemed_at    timestamptz NOT NULL DEFAULT now(),
    FOREIGN KEY (event_id, voucher_id) REFERENCES vouchers (event_id, id)
);
CREATE INDEX voucher_redemptions_voucher ON voucher_redemptions (event_id, voucher_id);
CREATE TABLE access_code_uses (
    event_id bigint NOT NULL,
    order_id bigint PRIMARY KEY REFERENCES orders (id),
    code_id  bigint NOT NULL,
    places   integer NOT NULL CHECK (places > 0),
    used_at  timestamptz NOT NULL DEFAULT now(),
    FOREIGN KEY (event_id, code_id) REFERENCES access_codes (event_id, id)
);

-- +goose Down
DROP TABLE access_code_uses, voucher_redemptions, order_lines, hold_ga_types, hold_seat_types,
    access_codes, vouchers, ticket_type_prices, ticket_types, event_fees, event_pricing;
