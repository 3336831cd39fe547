-- +goose Up

-- Staff logins counted so that a stranger cannot turn the throttle against the owner.
-- Each attempt counts on a few counters before its password is hashed: the account
-- from this client (a known device, or the address), the address across accounts, and
-- the account from clients it has never logged in from. One statement takes all of
-- them or none (queries/staff.sql, LoginAttemptTake); a success gives its count back.
DROP TABLE staff_login_failures;

CREATE TABLE staff_login_throttle (
    -- 'pair:<email> <client>', 'address:<address>' or 'account:<email>'
    key      text PRIMARY KEY,
    -- attempts counted within the window and not given back by a success
    failures integer NOT NULL DEFAULT 0 CHECK (failures >= 0),
    last_at  timestamptz NOT NULL DEFAULT now()
);

-- What an account has logged in from: the hash of a known-device token (the token
-- itself is only in the browser's cookie) or an address (IPv6 per /64). A known
-- client counts its failures apart from strangers'.
CREATE TABLE staff_known_clients (
    staff_id bigint NOT NULL REFERENCES staff (id) ON DELETE CASCADE,
    kind     text NOT NULL CHECK (kind IN ('device', 'address')),
    key      text NOT NULL,
    first_at timestamptz NOT NULL DEFAULT now(),
    last_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (staff_id, kind, key)
);

-- +goose Down
DROP TABLE staff_known_clients;
DROP TABLE staff_login_throttle;
CREATE TABLE staff_login_failures (
    id   bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    kind text NOT NULL CHECK (kind IN ('account', 'address')),
    key  text NOT NULL,
    at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX staff_login_failures_key ON staff_login_failures (kind, key, at);
