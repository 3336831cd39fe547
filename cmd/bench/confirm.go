package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"
)

// The confirm measurement: orders paid through the API, each confirmed by the test
// provider's signed webhook (ApplyPayment: the payment recorded, the seats sold, the
// tickets issued, the confirmation email queued), against pgbench running the confirm
// statements alone on orders made ready the same way. Both sides walk through orders
// of their own, so every attempt confirms a pending order.

// pgbenchConfirmScript is the sale of one pending one-seat order as booking's sell and
// ApplyPayment send it (queries/seats.sql SeatSell, queries/tickets.sql
// TicketsIssueForSeats, queries/holds.sql HoldMarkSold, queries/orders.sql
// OrderConfirm), in one transaction. Order i holds seat min_seat+i with hold
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
UPDATE holds SET sold_at = now(), released_at = NULL WHERE event_id = :event AND id = :h AND sold_at IS NULL;
UPDATE orders SET status = 'confirmed', status_reason = '', payment_id = 'pgbench', confirmed_at = now(), updated_at = now()
WHERE id = :o AND status = 'pending';
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
	CPU        cpuUse
	Queries    *queryReport // -queries: the server's round trips in the window
}

func (r *confirmResult) rate() float64 { return float64(r.Confirmed) / r.Seconds }

const testCard = "4242 4242 4242 4242"

// runConfirmAPI makes one pending order per seat of ev through the API (hold, then
// checkout; ten per session), then pays them from opts.clients clients for the warm-up
// and the measured window. Confirmations are counted where booking decides them: the
// server's boxoffice_orders_confirmed_total, read as the window opens and closes. Once
// the webhooks of the run have all arrived, that counter must equal the orders
// confirmed in SQL and the payments accepted.
func runConfirmAPI(ctx context.Context, srv *server, cl *apiClient, sessions []buyer, ev event, opts options) (*confirmResult, error) {
	n := min(opts.confirmOrders, len(ev.SeatIDs), len(sessions)*10)
	res := &confirmResult{Name: "API pay + webhook confirm, one seat", Orders: n, Seconds: opts.duration.Seconds()}
	step(fmt.Sprintf("confirm: making %s pending orders through the API (hold, checkout) on event %d", num(n), ev.ID))
	orders := make([]int64, n)
	var next atomic.Int64
	g, gctx := errgroup.WithContext(ctx)
	for range opts.clients {
		g.Go(func() error {
			var answer bytes.Buffer
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return nil
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
	if err := g.Wait(); err != nil {
		return nil, fmt.Errorf("confirm setup: %w", err)
	}
	confirmedBefore := srv.counter("boxoffice_orders_confirmed_total")

	start := time.Now()
	warmEnd := start.Add(opts.warmup)
	end := warmEnd.Add(opts.duration)
	buyers := (n + 9) / 10 // sessions[i/10] made order i
	var walk, accepted atomic.Int64
	var ranOut atomic.Bool
	tallies := make([]tally, opts.clients)
	var wg sync.WaitGroup
	var atOpen, atClose float64
	wg.Go(func() {
		sleepUntil(ctx, warmEnd)
		atOpen = srv.counter("boxoffice_orders_confirmed_total")
		sleepUntil(ctx, end)
		atClose = srv.counter("boxoffice_orders_confirmed_total")
	})
	for c := range opts.clients {
		wg.Go(func() {
			t := &tallies[c]
			var answer bytes.Buffer
			body := []byte(`{"card":"` + testCard + `"}`)
			for ctx.Err() == nil && time.Now().Before(end) {
				j := int(walk.Add(1)) - 1
				if j >= buyers*10 {
					ranOut.Store(true)
					return
				}
				// Consecutive payments are of different buyers: a buyer's orders
				// confirm one at a time (booking takes the buyer's lock to count the
				// buyer's seats), and one buyer paying ten orders at once is no onsale.
				i := (j%buyers)*10 + j/buyers
				if i >= n {
					continue
				}
				sent := time.Now()
				status, err := cl.post(ctx, cl.base+"/api/v1/orders/"+strconv.FormatInt(orders[i], 10)+"/pay", sessions[i/10], body, &answer)
				done := time.Now()
				if status == http.StatusAccepted {
					accepted.Add(1)
				}
				if done.Before(warmEnd) || done.After(end) {
					continue
				}
				t.record(status, http.StatusAccepted, err, answerKey(status, answer.Bytes()), answer.Bytes(), done.Sub(sent))
			}
		})
	}
	win := startWindow(ctx, srv, opts, "-confirm", warmEnd, end)
	wg.Wait()
	res.RanOut = ranOut.Load()
	var err error
	if res.CPU, res.Queries, err = win.finish(); err != nil {
		return res, err
	}
	var all tally
	for i := range tallies {
		all.add(&tallies[i])
	}
	res.Attempts, res.Refused, res.Errors = all.requests, all.refused, all.errs
	if all.firstErr != nil {
		res.FirstError = all.firstErr.Error()
	}
	slices.Sort(all.latencies)
	res.P50, res.P99 = percentile(all.latencies, 0.50), percentile(all.latencies, 0.99)
	res.Confirmed = int64(atClose - atOpen)

	// The webhooks of the last payments are still on their way: wait for them, then
	// the counter, SQL and the accepted payments must agree.
	want := accepted.Load()
	deadline := time.Now().Add(30 * time.Second)
	var inSQL int64
	for {
		if err := srv.setup.QueryRow(ctx, `SELECT count(*) FROM orders WHERE event_id = $1 AND status = 'confirmed'`, ev.ID).Scan(&inSQL); err != nil {
			return res, err
		}
		if inSQL >= want || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	counted := int64(srv.counter("boxoffice_orders_confirmed_total") - confirmedBefore)
	if inSQL != want || counted != want {
		res.Check = fmt.Sprintf("%d payments accepted, %d orders confirmed in SQL, boxoffice_orders_confirmed_total moved by %d", want, inSQL, counted)
	}
	return res, nil
}

// counter reads one of the server's counters from its metrics registry.
func (s *server) counter(name string) float64 {
	families, err := s.app.Metrics.Registry.Gather()
	if err != nil {
		return 0
	}
	for _, f := range families {
		if f.GetName() == name {
			sum := 0.0
			for _, m := range f.GetMetric() {
				sum += m.GetCounter().GetValue()
			}
			return sum
		}
	}
	return 0
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
func runConfirmPgbench(ctx context.Context, srv *server, ev event, opts options) (*confirmResult, error) {
	res := &confirmResult{Name: "pgbench, the confirm statements", Orders: len(ev.SeatIDs)}
	if ev.MaxID-ev.MinID+1 != int64(len(ev.SeatIDs)) {
		return res, fmt.Errorf("the event's seat ids are not contiguous")
	}
	step(fmt.Sprintf("confirm: making %s pending orders in SQL on event %d", num(len(ev.SeatIDs)), ev.ID))
	minOrder, minHold, err := srv.pgbenchConfirmSetup(ctx, ev)
	if err != nil {
		return res, err
	}
	dir, err := os.MkdirTemp("", "holdbench")
	if err != nil {
		return res, err
	}
	defer os.RemoveAll(dir)
	script := filepath.Join(dir, "confirm.sql")
	if err := os.WriteFile(script, []byte(pgbenchConfirmScript), 0o644); err != nil {
		return res, err
	}
	args := func(secs int, from int64) []string {
		return []string{"-n", "-c", strconv.Itoa(opts.clients), "-j", strconv.Itoa(opts.threads), "-T", strconv.Itoa(secs),
			"-D", fmt.Sprintf("n=%d", from-1), "-D", fmt.Sprintf("clients=%d", opts.clients),
			"-D", fmt.Sprintf("event=%d", ev.ID), "-D", fmt.Sprintf("min_order=%d", minOrder),
			"-D", fmt.Sprintf("min_hold=%d", minHold), "-D", fmt.Sprintf("min_seat=%d", ev.MinID),
			"-f", script, srv.dbURL}
	}
	confirmed := func() (int64, int64, error) {
		var n, last int64
		err := srv.setup.QueryRow(ctx, `SELECT count(*), coalesce(max(id) - $2 + 1, 0) FROM orders
			WHERE event_id = $1 AND status = 'confirmed'`, ev.ID, minOrder).Scan(&n, &last)
		return n, last, err
	}
	if w := wholeSeconds(opts.warmup); w > 0 {
		if _, _, err := pgbench(ctx, args(w, 0)); err != nil {
			return res, err
		}
	}
	before, last, err := confirmed()
	if err != nil {
		return res, err
	}
	from := (last + int64(opts.clients) - 1) / int64(opts.clients)
	secs := wholeSeconds(opts.duration)
	res.Seconds = float64(secs)
	cmdArgs := args(secs, from)
	res.Command = "pgbench " + strings.Join(cmdArgs[:len(cmdArgs)-1], " ") + " <bench database URL>"
	meter := startCPUMeter(ctx, srv, "pgbench")
	out, used, err := pgbench(ctx, cmdArgs)
	res.CPU = meter.stop(used)
	if err != nil {
		return res, err
	}
	if m := txRe.FindSubmatch(out); m != nil {
		res.Attempts, _ = strconv.ParseInt(string(m[1]), 10, 64)
	}
	if m := latencyRe.FindSubmatch(out); m != nil {
		res.LatencyMS, _ = strconv.ParseFloat(string(m[1]), 64)
	}
	after, last, err := confirmed()
	if err != nil {
		return res, err
	}
	res.Confirmed = after - before
	res.RanOut = last >= int64(len(ev.SeatIDs))-int64(opts.clients)
	return res, nil
}
