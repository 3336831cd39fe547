package booking

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"boxoffice/internal/db"
	"boxoffice/internal/dbtest"
)

// proxiedFixture is confirmSpec's event served through a TCP proxy that can cut the
// service's connections.
func proxiedFixture(t *testing.T) (fixture, *dbtest.Proxy) {
	t.Helper()
	proxy, url := dbtest.ProxyFor(t, dbtest.URL(t))
	pool, err := pgxpool.New(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return fixtureOn(t, pool, confirmSpec(), DefaultConfig()), proxy
}

// runBatch runs two buyers' exact holds as one batch, with the commit cut by arm, and
// returns their answers.
func runBatch(t *testing.T, f fixture, arm func(string) <-chan struct{}, seats [][]int64) []exactAnswer {
	t.Helper()
	calls := make([]*exactCall, len(seats))
	for i, ids := range seats {
		calls[i] = newExactCall(db.SeatsHoldExactParams{
			EventID: f.event, Buyer: "b" + strconv.Itoa(i), SeatIds: ids,
			TtlSeconds: f.svc.store.cfg.HoldTTL.Seconds(), BuyerLimit: int32(f.svc.store.cfg.MaxPerBuyer),
		}, make(chan struct{}))
	}
	cut := arm("commit")
	f.svc.store.runExact(calls)
	select {
	case <-cut:
	case <-time.After(10 * time.Second):
		t.Fatal("the batch's commit was not cut")
	}
	out := make([]exactAnswer, len(calls))
	for i, c := range calls {
		out[i] = <-c.done
	}
	return out
}

// checkHeld checks that each buyer of runBatch got a hold, the one holding its seats,
// and that the event has holds holds.
func checkHeld(t *testing.T, f fixture, asks [][]int64, got []exactAnswer, holds int) {
	t.Helper()
	for i, a := range got {
		if a.err != nil || len(a.rows) == 0 || a.rows[0].Status != "held" {
			t.Fatalf("buyer %d: got %+v, want its hold", i, a)
		}
		for _, h := range f.heldBy(t, asks[i]) {
			if h != a.rows[0].HoldID {
				t.Errorf("buyer %d: its seats are held by hold %d, answered hold %d", i, h, a.rows[0].HoldID)
			}
		}
	}
	if n := f.count(t, `SELECT count(*) FROM holds WHERE event_id = $1`, f.event); n != holds {
		t.Errorf("holds: got %d, want %d", n, holds)
	}
}

// heldBy returns the hold holding each seat (0: none).
func (f fixture) heldBy(t *testing.T, seats []int64) []int64 {
	t.Helper()
	return f.ids(t, `SELECT coalesce(held_by, 0) FROM seats WHERE event_id = $1 AND id = ANY($2) ORDER BY id`, f.event, seats)
}

// TestBatchCommitAnswerLost: a batch of two buyers' holds commits, and the answer to
// its commit is lost with the connection. Each buyer gets its hold, the one that has
// its seats, not a conflict over its own seats. Negative control: the same call run
// again as it was, which is what the buyer used to get, answers that the seats are
// taken.
func TestBatchCommitAnswerLost(t *testing.T) {
	t.Parallel()
	f, proxy := proxiedFixture(t)
	seats := f.rowSeats(t, "Floor", "A")
	asks := [][]int64{seats[0:2], seats[2:3]}
	checkHeld(t, f, asks, runBatch(t, f, proxy.LoseAnswer, asks), 2) // the batch's
	rows, err := f.svc.store.q.SeatsHoldExact(t.Context(), db.SeatsHoldExactParams{
		EventID: f.event, Buyer: "b0", SeatIds: asks[0], TtlSeconds: 600, BuyerLimit: 10,
	})
	if err != nil || len(rows) == 0 || rows[0].Status != "taken" {
		t.Errorf("negative control, the call run again: got %+v, %v; want taken", rows, err)
	}
}

// TestBatchCommitLost: a batch whose commit never reaches the server is rolled back;
// its calls run again one by one and each buyer gets a hold of its seats, and no hold
// of the batch is left.
func TestBatchCommitLost(t *testing.T) {
	t.Parallel()
	f, proxy := proxiedFixture(t)
	seats := f.rowSeats(t, "Floor", "A")
	asks := [][]int64{seats[0:2], seats[2:3]}
	checkHeld(t, f, asks, runBatch(t, f, proxy.LoseMessage, asks), 2) // of the calls run again
}

// TestQueuedHoldGoneNeverRuns: with every batching worker stuck behind a row lock, a
// hold is queued and its request cancelled. When the workers are free again it is not
// run: its seat stays free and the caller gets its context's error. The stuck holds,
// whose callers still wait, are run. Negative control: the same with a request that is
// not cancelled holds its seat, so the check of the seat would see a hold run.
func TestQueuedHoldGoneNeverRuns(t *testing.T) {
	t.Parallel()
	for _, cancelled := range []bool{true, false} {
		t.Run(strconv.FormatBool(cancelled), func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, confirmSpec(), DefaultConfig())
			seats := f.rowSeats(t, "Floor", "A")
			lock, err := f.pool.Begin(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			defer lock.Rollback(context.Background()) //nolint:errcheck // released below
			if _, err := lock.Exec(t.Context(), `SELECT 1 FROM seats WHERE event_id = $1 AND id = ANY($2) FOR UPDATE`,
				f.event, seats[:batchWorkers]); err != nil {
				t.Fatal(err)
			}
			stuck := make(chan error, batchWorkers)
			for i := range batchWorkers {
				go func() {
					_, err := f.svc.Buyer.Hold(context.Background(), HoldRequest{EventID: f.event, Buyer: buyerName("s", i), SeatIDs: seats[i : i+1]})
					stuck <- err
				}()
				eventually(t, "a worker stuck behind the lock", 10*time.Second, func() bool {
					return f.count(t, `SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`) == i+1
				})
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			victim := seats[batchWorkers]
			answer := make(chan error, 1)
			go func() {
				_, err := f.svc.Buyer.Hold(ctx, HoldRequest{EventID: f.event, Buyer: "victim", SeatIDs: []int64{victim}})
				answer <- err
			}()
			eventually(t, "the hold queued", 10*time.Second, func() bool { return len(f.svc.store.exactQ) == 1 })
			if cancelled {
				cancel()
			}
			if err := lock.Rollback(t.Context()); err != nil {
				t.Fatal(err)
			}
			for range batchWorkers {
				if err := <-stuck; err != nil {
					t.Errorf("a stuck hold: got %v, want its seat", err)
				}
			}
			err = <-answer
			held := f.heldBy(t, []int64{victim})[0] != 0
			if cancelled && (!errors.Is(err, context.Canceled) || held) {
				t.Errorf("cancelled while queued: got %v and the seat held %v, want context.Canceled and the seat free", err, held)
			}
			if !cancelled && (err != nil || !held) {
				t.Errorf("negative control, not cancelled: got %v and the seat held %v, want the seat held", err, held)
			}
		})
	}
}
