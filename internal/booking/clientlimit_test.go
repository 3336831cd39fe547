package booking

import (
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"

	"boxoffice/internal/db"
)

// clientLimitConfig lets one network hold 12 seats and places at once.
func clientLimitConfig() Config {
	cfg := DefaultConfig()
	cfg.MaxHeldPerClient = 12
	return cfg
}

// network is the client network the tests' holds come from.
const network = "2001:db8:1:2::/64"

// wantClientLimit fails t unless err is a *ClientLimitError of limit with held held.
func wantClientLimit(t *testing.T, what string, err error, limit, held int) {
	t.Helper()
	var lim *ClientLimitError
	if !errors.As(err, &lim) || lim.Limit != limit || lim.Held != held {
		t.Errorf("%s: got %v, want *ClientLimitError with Limit %d and Held %d", what, err, limit, held)
	}
}

// crowdFromOneNetwork sends 30 holds of one seat or place at once, each from a buyer of
// its own and all from one network: a third exact seats (batched), a third best
// available, a third GA places. It returns how many were held and how many refused
// for the network's limit; anything else fails t.
func crowdFromOneNetwork(t *testing.T, f fixture) (held, limited int64) {
	t.Helper()
	seats := f.rowSeats(t, "Floor", "A")
	var ok, refused atomic.Int64
	var errs errorCounter
	atOnce(30, func(i int) {
		req := HoldRequest{EventID: f.event, Buyer: fmt.Sprintf("script-%d", i), Client: network}
		switch i % 3 {
		case 0:
			req.SeatIDs = []int64{seats[len(seats)-1-i/3]} // from the far end: best available starts at the other
		case 1:
			req.Quantity = 1
		case 2:
			req.GATierID, req.Quantity = f.tier, 1
		}
		_, err := f.svc.Buyer.Hold(t.Context(), req)
		var lim *ClientLimitError
		switch {
		case err == nil:
			ok.Add(1)
		case errors.As(err, &lim):
			refused.Add(1)
		default:
			errs.add(err)
		}
	})
	errs.report(t, "holds")
	return ok.Load(), refused.Load()
}

// TestClientLimitConcurrent: 30 buyers of one network hold at once, by every way of
// holding. The network's lock makes them count one after another, whatever batch or
// transaction each runs in: exactly 12 are held, the rest refused, and the database
// records 12 places held from the network.
func TestClientLimitConcurrent(t *testing.T) {
	t.Parallel()
	f := newFixture(t, limitSpec(), clientLimitConfig())
	held, limited := crowdFromOneNetwork(t, f)
	if held != 12 || limited != 18 {
		t.Errorf("got %d held and %d refused, want 12 and 18", held, limited)
	}
	if got := f.count(t, `SELECT coalesce(sum(seat_count + ga_quantity), 0)::int FROM holds
		WHERE event_id = $1 AND client_key = $2 AND released_at IS NULL AND expires_at > now()`, f.event, network); got != 12 {
		t.Errorf("places held from the network in the database: got %d, want 12", got)
	}
	if got := f.count(t, `SELECT count(*) FROM seats s JOIN holds h ON h.event_id = s.event_id AND h.id = s.held_by
		WHERE s.event_id = $1 AND h.client_key = $2`, f.event, network); got > 12 {
		t.Errorf("seats held from the network: got %d, want at most 12", got)
	}
	// Another network holds as before.
	if _, err := f.svc.Buyer.Hold(t.Context(), HoldRequest{EventID: f.event, Buyer: "neighbour", Client: "198.51.100.7", Quantity: 4}); err != nil {
		t.Errorf("a buyer of another network: %v", err)
	}
}

// TestClientLimitConcurrentNegativeControl: the same crowd with the limit off holds
// all it asks for, so the test above would see a network take more than its share.
func TestClientLimitConcurrentNegativeControl(t *testing.T) {
	t.Parallel()
	f := newFixture(t, limitSpec(), DefaultConfig())
	held, limited := crowdFromOneNetwork(t, f)
	if held != 30 || limited != 0 {
		t.Errorf("limit off: got %d held and %d refused, want all 30 held", held, limited)
	}
	if got := f.count(t, `SELECT count(*) FROM holds WHERE event_id = $1 AND client_key IS NOT NULL`, f.event); got != 0 {
		t.Errorf("limit off: got %d holds recording a network, want none", got)
	}
}

// TestClientLimitLockNegativeControl proves the concurrent test can catch a race: a
// network's count taken and a hold inserted as separate statements, without the
// network's lock, lets 30 requests at once past 12 (in some round of a few).
func TestClientLimitLockNegativeControl(t *testing.T) {
	t.Parallel()
	f := newFixture(t, limitSpec(), DefaultConfig())
	ctx := t.Context()
	var got []int64
	for round := range 5 {
		client := fmt.Sprintf("203.0.113.%d", round)
		var ok atomic.Int64
		var errs errorCounter
		atOnce(30, func(i int) {
			var held int
			if err := f.pool.QueryRow(ctx, `SELECT held FROM client_places($1, $2)`, f.event, client).Scan(&held); err != nil || held >= 12 {
				if err != nil {
					errs.add(err)
				}
				return
			}
			if _, err := f.pool.Exec(ctx, `INSERT INTO holds (event_id, buyer, seat_count, expires_at, client_key)
				VALUES ($1, $2, 1, now() + interval '10 minutes', $3)`, f.event, fmt.Sprintf("b%d-%d", round, i), client); err != nil {
				errs.add(err)
				return
			}
			ok.Add(1)
		})
		errs.report(t, "count-then-insert holds")
		if got = append(got, ok.Load()); ok.Load() > 12 {
			break
		}
	}
	if slices.Max(got) <= 12 {
		t.Errorf("count-then-insert holds: got at most %d per round (%v), want more than 12 in some round", slices.Max(got), got)
	}
}

// TestClientLimitAllowance: what frees a network's allowance, and what it says.
func TestClientLimitAllowance(t *testing.T) {
	t.Parallel()
	hold := func(t *testing.T, f fixture, buyer string, seats ...int64) (Hold, error) {
		return f.svc.Buyer.Hold(t.Context(), HoldRequest{EventID: f.event, Buyer: buyer, Client: network, SeatIDs: seats})
	}

	t.Run("release frees it; the refusal says when a hold lapses", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, limitSpec(), clientLimitConfig())
		seats := f.rowSeats(t, "Floor", "A")
		first, err := hold(t, f, "a", seats[:6]...)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := hold(t, f, "b", seats[6:12]...); err != nil {
			t.Fatal(err)
		}
		_, err = hold(t, f, "c", seats[12])
		wantClientLimit(t, "a 13th seat", err, 12, 12)
		var lim *ClientLimitError
		if errors.As(err, &lim) && !lim.NextFree.Equal(first.ExpiresAt) {
			t.Errorf("NextFree: got %v, want the first hold's expiry %v", lim.NextFree, first.ExpiresAt)
		}
		_, err = f.svc.Buyer.Hold(t.Context(), HoldRequest{EventID: f.event, Buyer: "c", Client: network, Quantity: 1})
		wantClientLimit(t, "best available past the limit", err, 12, 12)
		_, err = f.svc.Buyer.Hold(t.Context(), HoldRequest{EventID: f.event, Buyer: "c", Client: network, GATierID: f.tier, Quantity: 1})
		wantClientLimit(t, "a GA place past the limit", err, 12, 12)
		if got := f.gaRemaining(t, f.tier); got != 20 {
			t.Errorf("GA places left after refusals: got %d, want 20", got)
		}
		if err := f.svc.Buyer.Release(t.Context(), first.ID, "a"); err != nil {
			t.Fatal(err)
		}
		if _, err := hold(t, f, "c", seats[12:18]...); err != nil {
			t.Errorf("6 seats after a release of 6: %v", err)
		}
	})

	t.Run("lapsed and bought holds free it", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, limitSpec(), clientLimitConfig())
		seats := f.rowSeats(t, "Floor", "A")
		lapsing, err := hold(t, f, "a", seats[:6]...)
		if err != nil {
			t.Fatal(err)
		}
		bought, err := hold(t, f, "b", seats[6:12]...)
		if err != nil {
			t.Fatal(err)
		}
		f.lapse(t, lapsing.ID)
		if got := f.pay(t, f.checkout(t, bought, "b"), "evt_1"); got != OutcomeConfirmed {
			t.Fatalf("payment: got %q, want %q", got, OutcomeConfirmed)
		}
		if _, err := hold(t, f, "c", seats[12:22]...); err != nil {
			t.Errorf("10 seats with 6 lapsed and 6 bought: %v", err)
		}
		_, err = hold(t, f, "d", seats[22:25]...)
		wantClientLimit(t, "3 more seats", err, 12, 10)
	})

	t.Run("no network, no limit", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, limitSpec(), clientLimitConfig())
		seats := f.rowSeats(t, "Floor", "A")
		for i := range 3 {
			f.hold(t, fmt.Sprintf("staff-%d", i), seats[i*10:i*10+10]...) // no Client: not counted
		}
		if got := f.count(t, `SELECT count(*) FROM holds WHERE event_id = $1 AND client_key IS NOT NULL`, f.event); got != 0 {
			t.Errorf("holds recording a network: got %d, want none", got)
		}
	})
}

// TestClientLimitWaitsNotForBatches: a batch of exact holds does not wait for a
// network another transaction is busy with: it commits the others and hands that hold
// back, to run alone, where it waits and is then counted with what the other held.
func TestClientLimitWaitsNotForBatches(t *testing.T) {
	t.Parallel()
	f := newFixture(t, limitSpec(), clientLimitConfig())
	seats := f.rowSeats(t, "Floor", "A")
	ctx := t.Context()
	tx, err := f.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx) //nolint:errcheck // committed below
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended('client/' || $1::text, $2::bigint))`, network, f.event); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, `INSERT INTO holds (event_id, buyer, seat_count, expires_at, client_key)
		VALUES ($1, 'other', 8, now() + interval '10 minutes', $2)`, f.event, network); err != nil {
		t.Fatal(err)
	}
	call := func(buyer, client string, ids ...int64) *exactCall {
		return newExactCall(db.SeatsHoldExactParams{
			EventID: f.event, Buyer: buyer, SeatIds: ids, TtlSeconds: 600, BuyerLimit: 10, ClientKey: client, ClientLimit: 12,
		}, nil)
	}
	mine, neighbour := call("mine", network, seats[20:25]...), call("neighbour", "198.51.100.7", seats[30])
	busy, err := f.svc.store.runTogether([]*exactCall{neighbour, mine}) // waiting would fail it at batchTimeout
	if err != nil {
		t.Fatalf("batch: %v", err)
	}
	if len(busy) != 1 || busy[0] != mine {
		t.Errorf("handed back: got %d calls, want the busy network's one", len(busy))
	}
	if a := <-neighbour.done; a.err != nil || len(a.rows) != 1 || a.rows[0].Status != "held" {
		t.Errorf("the other network's hold: got %+v, want held", a)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	_, err = f.svc.Buyer.Hold(ctx, HoldRequest{EventID: f.event, Buyer: "mine", Client: network, SeatIDs: seats[20:25]})
	wantClientLimit(t, "5 seats beside the other's 8", err, 12, 8)
}
