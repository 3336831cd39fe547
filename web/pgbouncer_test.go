package web_test

import (
	"testing"

	"boxoffice/internal/booking"
	"boxoffice/internal/booking/bookingtest"
	"boxoffice/internal/dbtest"
)

// TestSaleThroughPgBouncer: with DATABASE_URL through PgBouncer in transaction mode
// (DATABASE_POOLER=transaction), two buyers hold, one is refused the other's seat,
// both check out and pay, and the webhook confirms: the hold path's functions, the
// checkout and the confirmation run over server connections handed out per
// transaction, and no seat is sold twice.
func TestSaleThroughPgBouncer(t *testing.T) {
	t.Parallel()
	app := newTestApp(t, func(o *appOptions) {
		o.DBURL = func(t testing.TB, url string) string { return dbtest.StartPgBouncer(t, url, 4) }
		o.Env = map[string]string{"DATABASE_POOLER": "transaction"}
	})
	if got := app.App.Config.DB.ExecMode; got != "cache_describe" {
		t.Fatalf("exec mode through the pooler: got %q, want cache_describe", got)
	}
	seats := firstSeats(t, app.Pool, app.EventID, 3)
	a, b := app.newClient(t), app.newClient(t)
	ha := a.hold(app.EventID, seats[0], seats[1])
	var e errorBody
	if st := b.do("POST", "/api/v1/events/"+itoa(app.EventID)+"/holds", map[string]any{"seatIds": seats[1:]}, &e); st != 409 || e.Error != "seat_unavailable" {
		t.Fatalf("hold of a held seat: got %d %q, want 409 seat_unavailable", st, e.Error)
	}
	hb := b.hold(app.EventID, seats[2])
	for _, buy := range []struct {
		c    *client
		hold string
	}{{a, ha.HoldID}, {b, hb.HoldID}} {
		co := buy.c.checkout(buy.hold)
		buy.c.pay(co.OrderID, "")
		waitOrder(t, buy.c, co.OrderID, booking.StatusConfirmed)
	}
	if n := count(t, app.Pool, `SELECT count(*) FROM seats WHERE event_id = $1 AND id = ANY($2) AND sold_at IS NOT NULL`, app.EventID, seats); n != 3 {
		t.Fatalf("seats sold: got %d, want 3", n)
	}
	bookingtest.Check(t, app.Pool, app.EventID)
}
