package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	"boxoffice/internal/benchkit"
)

// The confirm measurement: orders paid through the API, each confirmed by the test
// provider's signed webhook (ApplyPayment: the payment recorded, the seats sold, the
// tickets issued, the confirmation email queued), against pgbench running the confirm
// statements alone on orders made ready the same way. Both sides walk through orders
// of their own, so every attempt confirms a pending order.

// pgbenchConfirmScript is the sale of one pending one-seat order as booking's sell and
// ApplyPayment send it (queries/seats.sql SeatSell, queries/tickets.sql
// TicketsIssueForSeats, queries/orders.sql OrderConfirm, which marks the hold sold
// too), in one transaction. Order i holds seat min_seat+i with hold
// min_hold+i (pgbenchConfirmSetup makes them so).
const pgbenchConfirmScript = `\set n :n + 1
\set i :client_id + :clients * :n
\set o :min_order + :i
\set h :min_hold + :i
\set s :min_seat + :i
BEGIN;
WITH target AS (
    SELECT id FROM seats WHERE event_id = :event AND id = ANY(ARRAY[:s]::bigint[]) ORDER BY id FOR UPDATE
)
UPDATE seats s
SET sold_at = coalesce(s.sold_at, now()), order_id = :o, held_by = NULL, hold_expires_at = NULL
FROM target
WHERE s.event_id = :event AND s.id = target.id
  AND (s.order_id = :o OR (s.sold_at IS NULL AND (s.held_by IS NULL OR s.held_by = :h OR s.hold_expires_at <= now())))
RETURNING s.id;
INSERT INTO tickets (event_id, order_id, seat_id, code)
SELECT :event, :o, s.id, replace(gen_random_uuid()::text, '-', '')
FROM seats s WHERE s.event_id = :event AND s.order_id = :o ORDER BY s.id;
WITH sold_hold AS (
    UPDATE holds SET sold_at = now(), released_at = NULL WHERE event_id = :event AND id = :h AND sold_at IS NULL
)
UPDATE orders SET status = 'confirmed', status_reason = '', payment_id = 'pgbench', confirmed_at = now(), updated_at = now()
WHERE orders.id = :o AND orders.status = 'pending';
END;
`

// confirmResult is one side of the confirm measurement.
type confirmResult struct {
	Name       string
	Orders     int     // pending orders made ready before timing
	Confirmed  int64   // orders confirmed inside the measured window
	Attempts   int64   // pay calls (API) or transactions (pgbench) inside the window
	Seconds    float64 // the window
	RanOut     bool    // the walk reached the last order before the window ended
	Refused    map[string]int64
	Errors     int64
	FirstError string
	P50, P99   time.Duration // of the pay calls' answers
	LatencyMS  float64       // pgbench's mean
	Check      string        // a failed consistency check, or ""
	Command    string
	CPU        benchkit.CPUUse
	Queries    *queryReport // -queries: the server's round trips in the window
}

func (r *confirmResult) rate() float64 { return float64(r.Confirmed) / r.Seconds }

const (
	testCard = "4242 4242 4242 4242"
	// confirmedMetric counts the orders booking confirms.
	confirmedMetric = "boxoffice_orders_confirmed_total"
)

// confirmBench is `bench confirm`: orders paid through the API, each confirmed by the
// test provider's signed webhook, against pgbench running the confirm statements.
type confirmBench struct{}

func (confirmBench) flags(fs *flag.FlagSet, o *options) {
	fs.IntVar(&o.confirmOrders, "confirm-orders", 8000, "pending orders made through the API before the measurement (its clients stop if they pay them all)")
	fs.IntVar(&o.confirmPgOrders, "confirm-pgbench-orders", 100000, "pending orders made in SQL for pgbench's side")
	pgbenchFlags(fs, o)
}

func (confirmBench) check(o options) []error {
	errs := checkPgbench(o)
	if o.confirmOrders < o.clients || o.confirmPgOrders < o.clients {
		errs = append(errs, errors.New("-confirm-orders, -confirm-pgbench-orders: want at least -clients"))
	}
	return errs
}

func (confirmBench) describe(o options) string {
	return fmt.Sprintf("%s pending one-seat orders made through the API, %s in SQL for pgbench",
		benchkit.Thousands(o.confirmOrders), benchkit.Thousands(o.confirmPgOrders))
}

func (confirmBench) sessions(o options) int { return (o.confirmOrders + 9) / 10 }

func (confirmBench) prepare(ctx context.Context, srv *server, o options) ([]event, roundFunc, error) {
	evs, err := srv.newEvents(ctx, []string{"bench-confirm-api", "bench-confirm-pgbench"}, o.confirmOrders, o.confirmPgOrders)
	if err != nil {
		return nil, nil, err
	}
	api, pg := evs[0], evs[1]
	return evs, func(ctx context.Context, r *runner, tag string) error {
		step(fmt.Sprintf("confirm: pay + webhook confirm through the API on event %d", api.ID))
		a, err := runConfirmAPI(ctx, r.srv, r.cl, r.sessions, api, r.o, profileName("confirm", tag))
		if err != nil {
			return err
		}
		step(fmt.Sprintf("confirm: pgbench, the confirm statements on event %d", pg.ID))
		p, err := runConfirmPgbench(ctx, r.srv, pg, r.o)
		if err != nil {
			return err
		}
		r.rep.compare(tag, a, p, "ratio confirm API / pgbench", a.rate()/p.rate(), p.Confirmed > 0, "")
		return nil
	}, nil
}

// runConfirmAPI makes one pending order per seat of ev through the API (hold, then
// checkout; ten per session), then pays them from o.clients clients for the warm-up
// and the measured window. Confirmations are counted where booking decides them: the
// server's boxoffice_orders_confirmed_total, read as the window opens and closes. Once
// the webhooks of the run have all arrived, that counter must equal the orders
// confirmed in SQL and the payments accepted.
func runConfirmAPI(ctx context.Context, srv *server, cl *apiClient, sessions []buyer, ev event, o options, profile string) (*confirmResult, error) {
	n := min(o.confirmOrders, len(ev.SeatIDs), len(sessions)*10)
	res := &confirmResult{Name: "API pay + webhook confirm, one seat", Orders: n, Seconds: o.duration.Seconds()}
	step(fmt.Sprintf("confirm: making %s pending orders through the API (hold, checkout) on event %d", benchkit.Thousands(n), ev.ID))
	orders, err := makeOrders(ctx, cl, sessions, ev, n, o.clients)
	if err != nil {
		return nil, fmt.Errorf("confirm setup: %w", err)
	}
	confirmedBefore := srv.Counter(confirmedMetric)
	tm := newTiming(o)
	var atOpen, atClose float64
	var counted sync.WaitGroup
	counted.Go(func() {
		benchkit.SleepUntil(ctx, tm.warmEnd)
		atOpen = srv.Counter(confirmedMetric)
		benchkit.SleepUntil(ctx, tm.end)
		atClose = srv.Counter(confirmedMetric)
	})
	buyers := (n + 9) / 10 // sessions[i/10] made order i
	var walk, accepted atomic.Int64
	var ranOut atomic.Bool
	body := []byte(`{"card":"` + testCard + `"}`)
	all, w, err := drive(ctx, srv, o, tm, profile, func(int) func() (call, bool) {
		var answer bytes.Buffer
		return func() (call, bool) {
			i := n
			for i >= n {
				j := int(walk.Add(1)) - 1
				if j >= buyers*10 {
					ranOut.Store(true)
					return call{}, false
				}
				// Consecutive payments are of different buyers: a buyer's orders
				// confirm one at a time (booking takes the buyer's lock to count the
				// buyer's seats), and one buyer paying ten orders at once is no onsale.
				i = byBuyer(j, buyers)
			}
			c := call{want: http.StatusAccepted, sent: time.Now()}
			c.status, c.err = cl.post(ctx, cl.base+"/api/v1/orders/"+strconv.FormatInt(orders[i], 10)+"/pay", sessions[i/10], body, &answer)
			c.done, c.body, c.key = time.Now(), answer.Bytes(), answerKey(c.status, answer.Bytes())
			if c.status == http.StatusAccepted {
				accepted.Add(1)
			}
			return c, true
		}
	})
	counted.Wait()
	res.RanOut, res.CPU, res.Queries = ranOut.Load(), w.cpu, w.queries
	if err != nil {
		return res, err
	}
	res.Attempts, res.Refused, res.Errors, res.FirstError = all.requests, all.refused, all.errs, errText(all.firstErr)
	res.P50, res.P99 = benchkit.Percentiles(all.latencies)
	res.Confirmed = int64(atClose - atOpen)
	res.Check, err = srv.checkConfirmed(ctx, ev, accepted.Load(), confirmedBefore)
	return res, err
}

// byBuyer is the j-th of the orders of buyers buyers, ten each (order i is
// sessions[i/10]'s), taken so that consecutive ones are of different buyers.
func byBuyer(j, buyers int) int { return (j%buyers)*10 + j/buyers }

// makeOrders makes a pending one-seat order of each of ev's first n seats through
// the API (a hold, then checkout), with workers requests at a time; order i is
// sessions[i/10]'s. Requests at the same time are of different buyers: a buyer's
// second hold while the first is not checked out yet would join its basket.
func makeOrders(ctx context.Context, cl *apiClient, sessions []buyer, ev event, n, workers int) ([]int64, error) {
	orders := make([]int64, n)
	buyers := (n + 9) / 10
	var next atomic.Int64
	g, gctx := errgroup.WithContext(ctx)
	for range workers {
		g.Go(func() error {
			var answer bytes.Buffer
			for {
				j := int(next.Add(1)) - 1
				if j >= buyers*10 {
					return nil
				}
				i := byBuyer(j, buyers)
				if i >= n {
					continue
				}
				sess := sessions[i/10]
				var h struct {
					HoldID string `json:"holdId"`
				}
				body := []byte(`{"seatIds":[` + strconv.FormatInt(ev.SeatIDs[i], 10) + `]}`)
				if err := cl.postJSON(gctx, "/api/v1/events/"+strconv.FormatInt(ev.ID, 10)+"/holds", sess, body, http.StatusCreated, &h, &answer); err != nil {
					return err
				}
				var o struct {
					OrderID int64 `json:"orderId"`
				}
				if err := cl.postJSON(gctx, "/api/v1/holds/"+h.HoldID+"/checkout", sess, []byte(`{"email":"bench@example.com"}`), http.StatusCreated, &o, &answer); err != nil {
					return err
				}
				orders[i] = o.OrderID
			}
		})
	}
	return orders, g.Wait()
}

// checkConfirmed waits for the webhooks of the last payments, still on their way,
// then checks that the payments accepted, the orders confirmed in SQL and the move of
// the confirmed counter since before agree; it says how they differ, or "".
func (s *server) checkConfirmed(ctx context.Context, ev event, accepted int64, before float64) (string, error) {
	deadline := time.Now().Add(30 * time.Second)
	var inSQL int64
	for {
		if err := s.setup.QueryRow(ctx, `SELECT count(*) FROM orders WHERE event_id = $1 AND status = 'confirmed'`, ev.ID).Scan(&inSQL); err != nil {
			return "", err
		}
		if inSQL >= accepted || time.Now().After(deadline) {
			break
		}
		benchkit.Sleep(ctx, 100*time.Millisecond)
	}
	counted := int64(s.Counter(confirmedMetric) - before)
	if inSQL != accepted || counted != accepted {
		return fmt.Sprintf("%d payments accepted, %d orders confirmed in SQL, %s moved by %d", accepted, inSQL, confirmedMetric, counted), nil
	}
	return "", nil
}

// postJSON posts body and decodes the answer into out, or fails unless the status is want.
func (c *apiClient) postJSON(ctx context.Context, path string, s buyer, body []byte, want int, out any, answer *bytes.Buffer) error {
	status, err := c.post(ctx, c.base+path, s, body, answer)
	if err != nil {
		return err
	}
	if status != want {
		return fmt.Errorf("POST %s: got %d %.200s, want %d", path, status, answer.Bytes(), want)
	}
	return json.Unmarshal(answer.Bytes(), out)
}

// pgbenchConfirmSetup makes every seat of ev a pending one-seat order of its own, as
// hold and checkout would leave it, with consecutive ids: order min_order+i holds
// seat min_seat+i through hold min_hold+i.
func (s *server) pgbenchConfirmSetup(ctx context.Context, ev event) (minOrder, minHold int64, err error) {
	n := len(ev.SeatIDs)
	tx, err := s.setup.Begin(ctx)
	if err != nil {
		return 0, 0, err
	}
	defer tx.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck // after Commit it is a no-op
	var maxHold, maxOrder int64
	if err := tx.QueryRow(ctx, `WITH h AS (
		INSERT INTO holds (event_id, buyer, seat_count, expires_at)
		SELECT $1, 'pgbench-' || g, 1, now() + interval '1 hour' FROM generate_series(0, $2 - 1) g ORDER BY g
		RETURNING id) SELECT min(id), max(id) FROM h`, ev.ID, n).Scan(&minHold, &maxHold); err != nil {
		return 0, 0, err
	}
	if _, err := tx.Exec(ctx, `UPDATE seats SET held_by = $3 + (id - $2), hold_expires_at = now() + interval '1 hour'
		WHERE event_id = $1 AND id BETWEEN $2 AND $2 + $4 - 1`, ev.ID, ev.MinID, minHold, n); err != nil {
		return 0, 0, err
	}
	if err := tx.QueryRow(ctx, `WITH o AS (
		INSERT INTO orders (event_id, hold_id, buyer, email, seat_ids, amount_cents)
		SELECT $1, $3 + g, 'pgbench-' || g, 'bench@example.com', ARRAY[$2 + g], 4000 FROM generate_series(0, $4 - 1) g ORDER BY g
		RETURNING id) SELECT min(id), max(id) FROM o`, ev.ID, ev.MinID, minHold, n).Scan(&minOrder, &maxOrder); err != nil {
		return 0, 0, err
	}
	if maxHold-minHold+1 != int64(n) || maxOrder-minOrder+1 != int64(n) {
		return 0, 0, fmt.Errorf("confirm setup: ids not consecutive (holds %d..%d, orders %d..%d for %d)", minHold, maxHold, minOrder, maxOrder, n)
	}
	return minOrder, minHold, tx.Commit(ctx)
}

// runConfirmPgbench runs pgbenchConfirmScript on ev's orders: the warm-up, then the
// measured run from the first order the warm-up did not reach.
func runConfirmPgbench(ctx context.Context, srv *server, ev event, o options) (*confirmResult, error) {
	res := &confirmResult{Name: "pgbench, the confirm statements", Orders: len(ev.SeatIDs)}
	if ev.MaxID-ev.MinID+1 != int64(len(ev.SeatIDs)) {
		return res, fmt.Errorf("the event's seat ids are not contiguous")
	}
	step(fmt.Sprintf("confirm: making %s pending orders in SQL on event %d", benchkit.Thousands(len(ev.SeatIDs)), ev.ID))
	minOrder, minHold, err := srv.pgbenchConfirmSetup(ctx, ev)
	if err != nil {
		return res, err
	}
	confirmed := func() (int64, int64, error) {
		var n, last int64
		err := srv.setup.QueryRow(ctx, `SELECT count(*), coalesce(max(id) - $2 + 1, 0) FROM orders
			WHERE event_id = $1 AND status = 'confirmed'`, ev.ID, minOrder).Scan(&n, &last)
		return n, last, err
	}
	var before int64
	reached := func() (last int64, err error) {
		before, last, err = confirmed()
		return last, err
	}
	w, err := pgbenchWindow(ctx, srv, o, pgbenchSpec{Name: res.Name, Script: pgbenchConfirmScript}, reached,
		"event", ev.ID, "min_order", minOrder, "min_hold", minHold, "min_seat", ev.MinID)
	if err != nil {
		return res, err
	}
	res.Seconds, res.Command, res.CPU = float64(w.seconds), w.command, w.cpu
	res.Attempts, res.LatencyMS = w.transactions, w.latencyMS
	after, last, err := confirmed()
	if err != nil {
		return res, err
	}
	res.Confirmed = after - before
	res.RanOut = last >= int64(len(ev.SeatIDs))-int64(o.clients)
	return res, nil
}

func ranOut(r bool) string {
	if r {
		return ", **all paid before the window ended**"
	}
	return ""
}

func (r *confirmResult) row(rp *report, tag string) {
	rp.row(r.Name+tag, rate(r.rate(), "confirmed/s"), countsCell(r.Refused, r.Errors),
		"of "+benchkit.Thousands(r.Orders)+" orders"+ranOut(r.RanOut), r.latency(), "")
}

func (r *confirmResult) cpuUse() (string, benchkit.CPUUse) { return r.Name, r.CPU }

func (r *confirmResult) latency() string {
	if r.LatencyMS > 0 {
		return fmt.Sprintf("%.1f ms mean", r.LatencyMS)
	}
	return fmt.Sprintf("pay answered %.1f / %.1f ms", benchkit.Ms(r.P50), benchkit.Ms(r.P99))
}

func (r *confirmResult) details(b *strings.Builder) {
	fmt.Fprintf(b, "%s: %s confirmed in %.0f s, %s attempts answered in the window", r.Name, benchkit.Thousands(r.Confirmed), r.Seconds, benchkit.Thousands(r.Attempts))
	if r.FirstError != "" {
		fmt.Fprintf(b, " (first error: %s)", r.FirstError)
	}
	if r.Command != "" {
		fmt.Fprintf(b, "; `%s`", r.Command)
	}
	b.WriteString(".\n")
	if r.Check != "" {
		fmt.Fprintf(b, "**Check failed: %s.**\n", r.Check)
	}
	if r.Queries != nil && r.Confirmed > 0 {
		// The pay call and the webhook that confirms are two requests: per order is
		// the unit that compares with pgbench's one transaction.
		r.Queries.write(b, float64(r.Confirmed), "confirmed order")
	}
	b.WriteString("\n")
}
