-- +goose Up

-- The box office (issue 8): staff accounts, their failed logins and the audit log.
-- Staff sessions live in the sessions table like buyers' but are never cached in
-- memory, and every staff request reads the account again (internal/staff), so a
-- logout, a disabled account or a role change takes effect at once on every instance.

-- The placeholder table of the first migration had no role and was never used.
DROP TABLE staff_users;

CREATE TYPE staff_role AS ENUM ('admin', 'box_office', 'door');

CREATE TABLE staff (
    id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    -- stored lower-cased; logins compare lower-cased
    email         text NOT NULL UNIQUE CHECK (email = lower(email) AND email LIKE '%_@_%'),
    name          text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
    role          staff_role NOT NULL,
    password_hash text NOT NULL,
    -- bumped by a password change or a disable: sessions made before it end
    auth_epoch    integer NOT NULL DEFAULT 1,
    disabled_at   timestamptz,
    created_at    timestamptz NOT NULL DEFAULT now(),
    updated_at    timestamptz NOT NULL DEFAULT now()
);

-- Failed logins, per account (the email tried, known or not) and per address, counted
-- over a window by the login itself. PostgreSQL rather than Redis: a Redis outage must
-- neither lock staff out nor lift the throttle.
CREATE TABLE staff_login_failures (
    id   bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    kind text NOT NULL CHECK (kind IN ('account', 'address')),
    key  text NOT NULL,
    at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX staff_login_failures_key ON staff_login_failures (kind, key, at);

-- Every staff action: who, what, when, before and after.
CREATE TABLE audit_log (
    id       bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    at       timestamptz NOT NULL DEFAULT now(),
    staff_id bigint REFERENCES staff (id),
    action   text NOT NULL,
    subject  text NOT NULL DEFAULT '',
    before   jsonb,
    after    jsonb,
    address  text NOT NULL DEFAULT ''
);
CREATE INDEX audit_log_at ON audit_log (at DESC);

-- +goose Down
DROP TABLE audit_log;
DROP TABLE staff_login_failures;
DROP TABLE staff;
DROP TYPE staff_role;
CREATE TABLE staff_users (
    id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    email         text NOT NULL UNIQUE,
    name          text NOT NULL,
    password_hash text NOT NULL,
    created_at    timestamptz NOT NULL DEFAULT now()
);
