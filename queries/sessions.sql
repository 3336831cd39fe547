-- name: SessionFind :one
SELECT data, expiry FROM sessions WHERE token = @token AND expiry > now();

-- name: SessionCommit :exec
INSERT INTO sessions (token, data, expiry) VALUES (@token, @data, @expiry)
ON CONFLICT (token) DO UPDATE SET data = EXCLUDED.data, expiry = EXCLUDED.expiry;

-- name: SessionDelete :exec
DELETE FROM sessions WHERE token = @token;

-- name: SessionDeleteExpired :execrows
DELETE FROM sessions WHERE expiry <= now();
