-- Verified buyers: addresses registered for an onsale and confirmed through a link.

-- name: BuyerEmailUpsert :one
-- The address's row, made on first registration. The no-op update returns the id of
-- an existing row in the same statement.
INSERT INTO buyer_emails (email) VALUES (@email)
ON CONFLICT (email) DO UPDATE SET email = EXCLUDED.email
RETURNING id;

-- name: RegistrationLink :one
-- Registers the address for the event, or keeps its registration, and gives it a new
-- link, replacing any earlier one: unless a link went out less than gap_seconds ago or
-- max_links have gone already. No row: no link now (the answer to the buyer is the
-- same either way).
INSERT INTO email_registrations AS r (event_id, email_id, link_nonce, link_expires_at, links_sent, last_link_at)
VALUES (@event_id, @email_id, @nonce, now() + make_interval(secs => @ttl_seconds::float8), 1, now())
ON CONFLICT (event_id, email_id) DO UPDATE
SET link_nonce = EXCLUDED.link_nonce, link_expires_at = EXCLUDED.link_expires_at,
    links_sent = r.links_sent + 1, last_link_at = now()
WHERE r.last_link_at < now() - make_interval(secs => @gap_seconds::float8) AND r.links_sent < @max_links::int
RETURNING links_sent;

-- name: RegistrationLinkGet :one
-- What the link email of a registration says, as it stands now.
SELECT b.email, e.name AS event_name, r.link_nonce, r.link_expires_at, r.links_sent,
       (SELECT v.time_zone FROM venues v WHERE v.id = e.venue_id) AS time_zone
FROM email_registrations r
JOIN buyer_emails b ON b.id = r.email_id
JOIN events e ON e.id = r.event_id
WHERE r.event_id = @event_id AND r.email_id = @email_id;

-- name: RegistrationConfirm :one
-- Confirms the registration with its link, which works once and until it expires, by
-- the database clock: the affected row is the verdict. Confirming again with a newer
-- link keeps the first confirmation's time.
UPDATE email_registrations
SET confirmed_at = coalesce(confirmed_at, now()), link_nonce = NULL
WHERE event_id = @event_id AND email_id = @email_id AND link_nonce = @nonce AND link_expires_at > now()
RETURNING event_id;

-- name: BuyerEmailBind :one
-- The buyer id of a confirmed address: the one it has, or else the confirming
-- session's, set once.
UPDATE buyer_emails SET buyer = coalesce(buyer, @buyer::text)
WHERE id = @id
RETURNING buyer::text;

-- name: RegistrationCounts :one
-- How many addresses registered for the event's onsale, and how many confirmed.
SELECT count(*)::int AS registered, count(confirmed_at)::int AS confirmed
FROM email_registrations
WHERE event_id = @event_id;
