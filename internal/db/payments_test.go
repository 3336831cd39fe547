package db_test

import (
	"errors"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"boxoffice/internal/db"
)

// Pay records the provider's payment id after the charge; when the payment's webhook
// has the payment locked already, the record is skipped rather than waited for (the
// webhook records the id itself), and taken when the payment is free.
func TestPaymentSetProviderIDSkipsALockedPayment(t *testing.T) {
	ctx := t.Context()
	pool, _, p := orderPaying(t)
	if _, err := pool.Exec(ctx, `UPDATE payments SET provider_payment_id = NULL WHERE id = $1`, p.ID); err != nil {
		t.Fatal(err)
	}
	webhook, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer webhook.Rollback(ctx) //nolint:errcheck // ended below
	if _, err := webhook.Exec(ctx, `SELECT 1 FROM payments WHERE id = $1 FOR UPDATE`, p.ID); err != nil {
		t.Fatal(err)
	}

	conn, err := pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	// A wait would end in an error after 1 s instead of blocking the test.
	if _, err := conn.Exec(ctx, `SET lock_timeout = '1s'`); err != nil {
		t.Fatal(err)
	}
	defer conn.Exec(ctx, `RESET lock_timeout`) //nolint:errcheck // the connection goes back to the pool
	// The control: an update that waits for the lock does time out, so the lock is held.
	_, err = conn.Exec(ctx, `UPDATE payments SET updated_at = now() WHERE id = $1`, p.ID)
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != "55P03" {
		t.Fatalf("a waiting update: %v, want lock_not_available (55P03)", err)
	}

	q := db.New(conn)
	id := "pi_late"
	if err := q.PaymentSetProviderID(ctx, db.PaymentSetProviderIDParams{ID: p.ID, ProviderPaymentID: &id}); err != nil {
		t.Fatalf("record while locked: %v, want it skipped", err)
	}
	if got := providerIDOf(t, conn, p.ID); got != "" {
		t.Errorf("provider id %q recorded under the webhook's lock, want none", got)
	}
	if err := webhook.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if err := q.PaymentSetProviderID(ctx, db.PaymentSetProviderIDParams{ID: p.ID, ProviderPaymentID: &id}); err != nil {
		t.Fatalf("record: %v", err)
	}
	if got := providerIDOf(t, conn, p.ID); got != id {
		t.Errorf("provider id %q once free, want %q", got, id)
	}
}

func providerIDOf(t *testing.T, conn db.DBTX, paymentID int64) string {
	t.Helper()
	var id string
	if err := conn.QueryRow(t.Context(), `SELECT coalesce(provider_payment_id, '') FROM payments WHERE id = $1`, paymentID).Scan(&id); err != nil {
		t.Fatal(err)
	}
	return id
}
