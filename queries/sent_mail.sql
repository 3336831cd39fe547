-- name: SentMailClaim :one
-- Claims an email before it goes to the mail server. No row: it was sent already (a
-- job run again after sending), so nothing is sent. A row with attempts above one: an
-- earlier claim never saw the server's answer recorded, and the email goes again.
INSERT INTO sent_mail (message_id, order_id, kind)
VALUES (@message_id, @order_id, @kind)
ON CONFLICT (message_id) DO UPDATE
SET attempts = sent_mail.attempts + 1, claimed_at = now()
WHERE sent_mail.sent_at IS NULL
RETURNING attempts;

-- name: SentMailMarkSent :exec
-- The mail server accepted the email.
UPDATE sent_mail SET sent_at = now() WHERE message_id = @message_id AND sent_at IS NULL;
