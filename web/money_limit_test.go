package web_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"boxoffice/internal/booking"
)

// TestMoneyLimitCheckedAtConfirm closes the narrow race of the per-buyer limit at
// confirm. A payment's webhook starts its transaction while the buyer's hold A is live
// (its now() is before A's expiry) and waits on the order's lock, which the test holds;
// A lapses; the buyer holds B, as many seats again, which the limit allows because A
// no longer counts at B's now(); then the webhook goes on. It still sees A live (its
// now() is earlier), so a confirm that checked the limit only for lapsed holds would
// sell A too. Checked in every case, the limit sends A's payment to its refund.
//
// Negative control: the same interleaving with a limit that has room for both holds
// confirms A, and the buyer then has A sold and B held, twice the tight limit: the
// interleaving does reach confirm with B standing, and only the check stops it.
func TestMoneyLimitCheckedAtConfirm(t *testing.T) {
	t.Parallel()
	const perHold = 4
	cases := []struct {
		name, limit string
		want        string // A's order at the end
	}{
		{"limit of one hold", "4", booking.StatusRefunded},
		{"negative control: room for both", "8", booking.StatusConfirmed},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			app := newMoneyApp(t, func(o *appOptions) {
				o.Env = map[string]string{"MAX_SEATS_PER_BUYER": tc.limit}
			})
			ctx := context.Background()
			c := app.newClient(t)
			seats := firstSeats(t, app.Pool, app.EventID, 2*perHold)
			ha := c.hold(app.EventID, seats[:perHold]...)
			co := app.checkout(c, ha.HoldID)
			c.payAs(co.OrderID, cardOK, "none", nil)
			pid, _ := paymentOf(t, app.Pool, co.OrderID)

			lock, err := app.Pool.Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer lock.Rollback(ctx) //nolint:errcheck // committed below
			if _, err := lock.Exec(ctx, `SELECT 1 FROM orders WHERE id = $1 FOR UPDATE`, co.OrderID); err != nil {
				t.Fatal(err)
			}
			if err := app.Provider.Resend(ctx, pid); err != nil {
				t.Fatal(err)
			}
			started := waitLockWaiter(t, app.Pool, lock)
			id, _ := booking.ParseHoldID(ha.HoldID)
			// A lapses just after the webhook's transaction began: live for it, lapsed
			// for everything after.
			for _, q := range []string{
				`UPDATE holds SET expires_at = $3::timestamptz + interval '1 microsecond' WHERE event_id = $1 AND id = $2`,
				`UPDATE seats SET hold_expires_at = $3::timestamptz + interval '1 microsecond' WHERE event_id = $1 AND held_by = $2`,
			} {
				if _, err := app.Pool.Exec(ctx, q, id.Event, id.Seq, started); err != nil {
					t.Fatal(err)
				}
			}
			hb := c.hold(app.EventID, seats[perHold:]...)
			if err := lock.Commit(ctx); err != nil {
				t.Fatal(err)
			}

			o := waitOrder(t, c, co.OrderID, tc.want)
			sold, held := soldAndHeld(t, app.Pool, app.EventID, []int64{co.OrderID}, []string{hb.HoldID})
			switch tc.want {
			case booking.StatusRefunded:
				if o.StatusReason != booking.ReasonBuyerLimit || sold != 0 || held != perHold {
					t.Errorf("got %s (%s), %d sold and %d held, want refunded (buyer_limit), 0 sold, %d held",
						o.Status, o.StatusReason, sold, held, perHold)
				}
			default:
				if sold+held != 2*perHold {
					t.Errorf("control: got %d sold and %d held, want both holds standing (%d)", sold, held, 2*perHold)
				}
			}
			app.settle(t)
		})
	}
}

// waitLockWaiter waits until a transaction other than lock's waits on the order
// row's lock (the webhook's OrderLock) and returns when that transaction began: its
// now().
func waitLockWaiter(t *testing.T, pool *pgxpool.Pool, lock pgx.Tx) time.Time {
	t.Helper()
	ctx := context.Background()
	var self int
	if err := lock.QueryRow(ctx, `SELECT pg_backend_pid()`).Scan(&self); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		var started time.Time
		err := pool.QueryRow(ctx, `SELECT xact_start FROM pg_stat_activity
			WHERE datname = current_database() AND pid <> $1 AND wait_event_type = 'Lock'
			  AND query LIKE '%FROM orders%FOR UPDATE%'`, self).Scan(&started)
		if err == nil {
			return started
		} else if !errors.Is(err, pgx.ErrNoRows) {
			t.Fatal(err)
		}
		if time.Now().After(deadline) {
			t.Fatal("the webhook's transaction never waited on the order's lock")
		}
		time.Sleep(10 * time.Millisecond) // polling pg_stat_activity: there is no event to wait on
	}
}
