package main

import (
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"boxoffice/internal/dbtest"
)

// TestSeedStadium: seed-stadium creates the event with its waiting room on, its
// onsale ahead, the standing field asked for and its price list, and says so in the
// line a script reads.
func TestSeedStadium(t *testing.T) {
	t.Parallel()
	url := dbtest.URL(t)
	var out strings.Builder
	args := []string{"seed-stadium", "-slug", "sim-test", "-seats", "500", "-onsale-in", "1m", "-slots", "40", "-rate", "5", "-standing", "70"}
	if err := run(t.Context(), args, func(k string) string { return map[string]string{"DATABASE_URL": url}[k] }, nil, &out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "slug=sim-test seats=500 places=70") {
		t.Errorf("got %q, want the event's line", out.String())
	}
	pool, err := pgxpool.New(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	var seats, places, slots int
	var rate float64
	var ahead bool
	if err := pool.QueryRow(t.Context(), `SELECT (SELECT count(*) FROM seats s WHERE s.event_id = e.id),
		(SELECT sum(g.remaining) FROM ga_stripes g WHERE g.event_id = e.id), e.queue_slots, e.queue_rate,
		e.onsale_at > now() AND e.queue_enabled FROM events e WHERE e.slug = 'sim-test'`).Scan(&seats, &places, &slots, &rate, &ahead); err != nil {
		t.Fatal(err)
	}
	if seats != 500 || places != 70 || slots != 40 || rate != 5 || !ahead {
		t.Errorf("got %d seats, %d standing places, %d slots, rate %g, room on with onsale ahead %v; want 500, 70, 40, 5, true",
			seats, places, slots, rate, ahead)
	}
	// The price list is on by default: three types priced at each of the event's
	// levels (the ten rows of 500 seats are all of its first tier; and the standing
	// field), the fees and two vouchers.
	var types, prices, fees, vouchers int
	if err := pool.QueryRow(t.Context(), `SELECT (SELECT count(*) FROM ticket_types t WHERE t.event_id = e.id),
		(SELECT count(*) FROM ticket_type_prices p WHERE p.event_id = e.id),
		(SELECT count(*) FROM event_fees f WHERE f.event_id = e.id AND f.per_order_cents > 0),
		(SELECT count(*) FROM vouchers v WHERE v.event_id = e.id) FROM events e WHERE e.slug = 'sim-test'`).Scan(&types, &prices, &fees, &vouchers); err != nil {
		t.Fatal(err)
	}
	if types != 3 || prices != 6 || fees != 1 || vouchers != 2 {
		t.Errorf("got %d ticket types, %d type prices, %d fee rows, %d vouchers; want 3, 6, 1, 2", types, prices, fees, vouchers)
	}
	for _, bad := range []string{"0", "-2"} {
		out.Reset()
		err := run(t.Context(), []string{"seed-stadium", "-slug", "sim-bad", "-standing", bad}, func(k string) string { return map[string]string{"DATABASE_URL": url}[k] }, nil, &out)
		if err == nil || !strings.Contains(err.Error(), "-standing") {
			t.Errorf("-standing %s: got %v, want a refusal naming -standing", bad, err)
		}
	}
}
