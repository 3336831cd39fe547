-- name: StaffCreate :one
INSERT INTO staff (email, name, role, password_hash)
VALUES (lower(@email), @name, @role, @password_hash)
RETURNING id;

-- name: StaffByEmail :one
SELECT * FROM staff WHERE email = lower(@email);

-- name: StaffByID :one
SELECT * FROM staff WHERE id = @id;

-- name: StaffList :many
SELECT * FROM staff ORDER BY disabled_at IS NOT NULL, name, id;

-- name: StaffSetRole :one
UPDATE staff SET role = @role, updated_at = now()
WHERE id = @id
RETURNING *;

-- name: StaffSetDisabled :one
UPDATE staff
SET disabled_at = CASE WHEN @disabled::boolean THEN coalesce(disabled_at, now()) END,
    auth_epoch = auth_epoch + CASE WHEN @disabled::boolean AND disabled_at IS NULL THEN 1 ELSE 0 END,
    updated_at = now()
WHERE id = @id
RETURNING *;

-- name: StaffSetPassword :one
-- A new password also forgets the devices and addresses the account logged in from:
-- whoever knew the old one is a stranger to the throttle again.
WITH forget AS (DELETE FROM staff_known_clients WHERE staff_id = @id)
UPDATE staff SET password_hash = @password_hash, auth_epoch = auth_epoch + 1, updated_at = now()
WHERE id = @id
RETURNING *;

-- name: StaffCount :one
SELECT count(*) FROM staff;

-- name: LoginAttemptEnsure :exec
-- Creates the counters an attempt is to take, in key order; LoginAttemptTake decides.
INSERT INTO staff_login_throttle (key)
SELECT k FROM unnest(@keys::text[]) AS k ORDER BY k
ON CONFLICT (key) DO NOTHING;

-- name: LoginAttemptTake :one
-- One login attempt takes every counter in keys, before its password is hashed, or
-- none of them: the verdict. The counters are locked in key order (attempts do not
-- deadlock) and read at their latest, so parallel attempts count one after another.
-- The attempt goes on only if each counter is under its free count (frees, beside
-- keys) or past its delay since its last failure: delays[n] after n failures past the
-- free count, the last one for any more. Failures older than the window are
-- forgotten. present < cardinality(keys): a counter does not exist yet (or was
-- pruned meanwhile) and nothing was taken; unless wait_seconds says another refuses,
-- ensure them and take again.
WITH want AS (
    SELECT (@keys::text[])[i] AS key, (@frees::int[])[i] AS free
    FROM generate_subscripts(@keys::text[], 1) AS i
), locked AS (
    SELECT t.key, w.free, t.last_at,
           CASE WHEN t.last_at < clock_timestamp() - make_interval(secs => @window_seconds::float8)
                THEN 0 ELSE t.failures END AS failures
    FROM staff_login_throttle t JOIN want w ON w.key = t.key
    ORDER BY t.key
    FOR UPDATE OF t
), verdict AS (
    SELECT count(*) AS present,
           max(CASE WHEN l.failures >= l.free THEN l.last_at + interval '1 second' *
               (@delays::float8[])[least(l.failures - l.free + 1, cardinality(@delays::float8[]))] END) AS until
    FROM locked l
), taken AS (
    UPDATE staff_login_throttle t SET failures = l.failures + 1, last_at = clock_timestamp()
    FROM locked l, verdict v
    WHERE t.key = l.key AND v.present = cardinality(@keys::text[])
      AND (v.until IS NULL OR v.until <= clock_timestamp())
    RETURNING t.key
)
SELECT v.present::int AS present, (SELECT count(*) FROM taken)::int AS taken,
       greatest(ceil(extract(epoch FROM coalesce(v.until, clock_timestamp()) - clock_timestamp())), 0)::int AS wait_seconds
FROM verdict v;

-- name: LoginAttemptGiveBack :exec
-- An attempt that turned out right, or was never checked, gives its count back; a
-- success clears the counter named reset (the account from this client) outright.
-- Locked in key order, as LoginAttemptTake locks.
UPDATE staff_login_throttle t
SET failures = CASE WHEN t.key = @reset::text THEN 0 ELSE greatest(t.failures - 1, 0) END
FROM (SELECT key FROM staff_login_throttle WHERE key = ANY(@keys::text[]) ORDER BY key FOR UPDATE) l
WHERE t.key = l.key;

-- name: LoginAttemptPrune :execrows
DELETE FROM staff_login_throttle
WHERE last_at < now() - make_interval(secs => @window_seconds::float8);

-- name: StaffKnownClient :one
-- How the account named email knows this client: the hash of a device token the
-- browser presented and the account has logged in with (empty: none), and whether it has
-- logged in from address; both within known_seconds of their last login.
SELECT coalesce((SELECT k.key FROM staff_known_clients k
                 WHERE k.staff_id = s.id AND k.kind = 'device' AND k.key = ANY(@devices::text[])
                   AND k.last_at > now() - make_interval(secs => @known_seconds::float8)
                 ORDER BY k.key LIMIT 1), '')::text AS device,
       EXISTS (SELECT 1 FROM staff_known_clients k
               WHERE k.staff_id = s.id AND k.kind = 'address' AND k.key = @address::text
                 AND k.last_at > now() - make_interval(secs => @known_seconds::float8)) AS address_known
FROM staff s
WHERE s.email = lower(@email);

-- name: StaffKnownTouch :exec
INSERT INTO staff_known_clients (staff_id, kind, key) VALUES (@staff_id, @kind, @key)
ON CONFLICT (staff_id, kind, key) DO UPDATE SET last_at = now();

-- name: StaffKnownPrune :execrows
DELETE FROM staff_known_clients
WHERE last_at < now() - make_interval(secs => @known_seconds::float8);

-- name: StaffRehash :execrows
-- A stored hash under old parameters, replaced once its password verified; a password
-- changed meanwhile stays.
UPDATE staff SET password_hash = @new_hash
WHERE id = @id AND password_hash = @old_hash;

-- name: AuditAdd :exec
INSERT INTO audit_log (staff_id, action, subject, before, after, address)
VALUES (@staff_id, @action, @subject, @before, @after, @address);

-- name: AuditList :many
SELECT a.id, a.at, a.staff_id, coalesce(s.name, '') AS staff_name, coalesce(s.email, '') AS staff_email,
       a.action, a.subject, a.before, a.after, a.address
FROM audit_log a LEFT JOIN staff s ON s.id = a.staff_id
WHERE (sqlc.narg(before_id)::bigint IS NULL OR a.id < sqlc.narg(before_id))
ORDER BY a.id DESC
LIMIT @max;
