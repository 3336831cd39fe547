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
UPDATE staff SET password_hash = @password_hash, auth_epoch = auth_epoch + 1, updated_at = now()
WHERE id = @id
RETURNING *;

-- name: StaffCount :one
SELECT count(*) FROM staff;

-- name: LoginFailureAdd :exec
INSERT INTO staff_login_failures (kind, key) VALUES (@kind, @key);

-- name: LoginFailureCount :one
SELECT count(*) FROM staff_login_failures
WHERE kind = @kind AND key = @key AND at > now() - make_interval(secs => @window_seconds::float8);

-- name: LoginFailureClear :exec
DELETE FROM staff_login_failures WHERE kind = @kind AND key = @key;

-- name: LoginFailurePrune :execrows
DELETE FROM staff_login_failures WHERE at < now() - make_interval(secs => @window_seconds::float8);

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
