package main

import (
	"bytes"
	"compress/gzip"
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"boxoffice/internal/apptest"
	"boxoffice/internal/benchkit"
)

// smallOnsale runs the simulator of TestSmallOnsale, with extra flags.
func smallOnsale(t *testing.T, extra ...string) (*report, config) {
	t.Helper()
	// The proof of work on, at its default difficulty: every join pays, as at a real
	// onsale, through the simulator's own solver.
	o := apptest.Options{Env: map[string]string{"HOLD_TTL": "4s", "TIDY_INTERVAL": "500ms", "RATE_LIMIT": "1000", "RATE_BURST": "1000", "PROOF_OF_WORK": "on",
		// The limits per address at their defaults: each buyer has an address of its own.
		"ADDRESS_SESSIONS_PER_HOUR": "", "ADDRESS_JOINS_PER_HOUR": "", "ADDRESS_HOLDS_PER_MINUTE": "", "ADDRESS_SEATS_HELD": ""}}
	// The room pauses (503 queue_paused) when a Redis call takes over its timeout,
	// 1 s by default. make test runs this next to every other package on two
	// cores, where a starved Redis call takes that long without anything being
	// wrong; the room's own tests cover pausing. Here a pause would be noise.
	o.Queue.Timeout = 3 * time.Second
	p := apptest.New(t, o)
	// The onsale 8-9 s ahead and the early buyers in its last 6 s: under make test's load
	// (the race build beside every other package on two cores) the set-up has taken
	// seconds, and an early buyer's session, challenge and join 3-4 s, so that a
	// closer onsale left the pre-queue empty. The buying may last 120 s (-duration): it
	// ends at the sell-out, in 30-40 s on a quiet machine, but under that load the
	// first sales have come 24 s after the onsale, the 4 s holds lapsing on the way.
	onsaleAt := time.Now().Add(8 * time.Second).Truncate(time.Second).Add(time.Second)
	_, err := benchkit.CreateEvent(t.Context(), p.Pool, benchkit.Event{Slug: "sim-small", Seats: 300, OnsaleAt: onsaleAt,
		Queue: &benchkit.Queue{Slots: 40, Rate: 25, TokenTTL: 20 * time.Second, Idle: 10 * time.Second}, Pricing: true})
	if err != nil {
		t.Fatal(err)
	}
	// The program as serve runs it: its handler, and the tidy-up, the admitter and
	// the job queue in the background.
	srv, err := benchkit.ServeProgram(t.Context(), p.App, true)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	metricsSrv := httptest.NewServer(p.App.Metrics.Handler())
	t.Cleanup(metricsSrv.Close)

	cfg, _, _, err := parseFlags(append([]string{
		"-url", srv.URL, "-event", "sim-small", "-buyers", "300", "-seed", "7",
		"-early", "0.3", "-early-window", "6s", "-burst", "2s", "-poll", "2s", "-think", "100ms",
		"-max-qty", "3", "-abandon", "0.15", "-idle", "0.05", "-basket", "0.3", "-decline", "0.1", "-late", "0.2",
		"-ticket-wait", "20s", "-map-every", "500ms", "-duration", "120s", "-settle", "30s",
		"-db", p.Config.DatabaseURL, "-tidy", "500ms", "-conns", "64", "-metrics", metricsSrv.URL + "/metrics",
		"-trace", filepath.Join(t.TempDir(), "trace.csv"),
	}, extra...), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	r, err := simulate(t.Context(), cfg, testWriter{t})
	if err != nil {
		t.Fatal(err)
	}
	return r, cfg
}

// TestSmallOnsale runs the simulator against the whole program, served in-process, on
// an event of 300 seats and 60 standing places whose onsale is eight seconds ahead:
// 300 buyers, some early into the pre-queue, a waiting room of 40 at 25 a second (admissions lasting 20 s,
// or 10 s with no seat held), holds that lapse in 4 s, buyers who walk away once admitted, abandons,
// declined cards and late webhooks; the event is priced (ticket types, fees, tax, two
// vouchers, one of five uses), and buyers set types and enter vouchers. It must sell out, break no invariant (through the API and in
// SQL), and meet no answer but those an onsale normally gives; the turns of those who walked away
// lapse and their slots go to the next in line.
func TestSmallOnsale(t *testing.T) {
	t.Parallel()
	r, cfg := smallOnsale(t)
	var text strings.Builder
	r.writeText(&text)
	t.Log("\n" + text.String())
	for _, v := range r.Violations {
		t.Errorf("invariant broken: %s", v)
	}
	for k, n := range r.Errors {
		t.Errorf("error %s: %d times, want none", k, n)
	}
	if r.SoldOutSeconds == nil {
		t.Errorf("not sold out: want 300 buyers of up to 3 to sell 360 places")
	}
	if r.Counts.Confirmed == 0 || r.Admission.Admitted == 0 || r.Fairness.PreQueue == 0 {
		t.Errorf("got %d orders confirmed, %d admitted, %d in the pre-queue; want some of each",
			r.Counts.Confirmed, r.Admission.Admitted, r.Fairness.PreQueue)
	}
	for _, m := range r.Metrics {
		if !m.Match {
			t.Errorf("%s: the server counted %+.0f, the simulator %d %s", m.Metric, m.Delta, m.Count, m.Sim)
		}
	}
	if len(r.Metrics) == 0 {
		t.Error("no counts compared with the server's /metrics")
	}
	if l := r.Admission.Limit; l == nil || l.Max > 25 || l.Min <= 0 {
		t.Errorf("the server's admission limit over the sale: got %+v, want readings within (0, 25], the configured rate", l)
	}
	checkLapses(t, r)
	checkBasket(t, r)
	if r.Admission.MaxShopping > 40 {
		t.Errorf("at most %d shopping at once, want at most the 40 slots", r.Admission.MaxShopping)
	}
	// Each call's wait for one of the simulator's connections is part of its latency.
	for _, step := range []string{"hold", "pay", "join"} {
		w, l := r.ConnWait[step], r.Latency[step]
		if w.N != l.N || w.N == 0 || w.Max > l.Max || w.P99 > l.P99 {
			t.Errorf("%s: waits for a connection here %+v, latency %+v; want one a call, each within its call", step, w, l)
		}
	}
	checkTrace(t, cfg.Trace, r)
	checkChart(t, r)
	checkPricing(t, r)
	checkMoneyControl(t, cfg.DB, "sim-small")
}

// checkLapses checks that some admitted buyers walked away, that turns lapsed (no
// more than there were admissions) and that the queue reused their slots.
func checkLapses(t *testing.T, r *report) {
	t.Helper()
	if l := r.Lapses; l == nil || l.Walked == 0 || l.Lapsed == 0 || l.Reused == 0 || l.Lapsed > float64(r.Admission.Admitted) {
		t.Errorf("unused turns: got %+v, want buyers who walked away, turns that lapsed and slots reused", l)
	}
}

// checkBasket checks that some buyers added seats to their hold one by one, and that
// each add call answered is counted, with its latency.
func checkBasket(t *testing.T, r *report) {
	t.Helper()
	k := r.Basket
	if k == nil || k.Buyers == 0 || k.Added == 0 {
		t.Fatalf("basket: got %+v, want buyers who added seats one by one", k)
	}
	if k.Latency.N != k.Calls || k.Calls < k.Added || k.Latency.P99 < k.Latency.P50 {
		t.Errorf("basket: %d add calls, %d seats added, latency %+v; want one latency a call, a seat at most a call", k.Calls, k.Added, k.Latency)
	}
}

// checkChart draws the run's chart and reads it back: named for the event, a panel a
// quantity (the room's limit among them, read from -metrics), and the sell-out it
// says is the report's.
func checkChart(t *testing.T, r *report) {
	t.Helper()
	var buf bytes.Buffer
	if err := r.writeSVG(&buf); err != nil {
		t.Fatal(err)
	}
	c := parseChart(t, buf.Bytes())
	if want := "sim-small: 300 buyers"; c.title != want {
		t.Errorf("chart title %q, want %q", c.title, want)
	}
	if len(c.series) != 5 || len(c.frames) != 5 {
		t.Errorf("chart: %d lines in %d panels, want 5 (queue, shopping, the room's limit, held, sold)", len(c.series), len(c.frames))
	}
	if r.SoldOutSeconds != nil {
		want := fmt.Sprintf("sold out %.1f s after the onsale", *r.SoldOutSeconds)
		if !strings.Contains(c.desc, want) || !slices.Contains(c.marks, "sold out "+secondsLabel(*r.SoldOutSeconds)) {
			t.Errorf("chart description %q, markers %q: want %q and its marker", c.desc, c.marks, want)
		}
	}
}

// checkTrace reads the run's -trace: a line per buyer, as many admitted as the report
// counts, and a first ETA, shown before the admission, for as many as the report fits.
func checkTrace(t *testing.T, path string, r *report) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 301 || rows[0][3] != "admitted" {
		t.Fatalf("trace: %d lines, header %v; want a header and 300 buyers", len(rows), rows[0])
	}
	admitted, etas := 0, 0
	surelyBefore, maybeBefore := 0, 0 // first ETAs whose turn came before the sell-out, give or take the trace's rounding
	for _, row := range rows[1:] {
		if row[3] == "" {
			continue
		}
		admitted++
		if row[4] == "" {
			continue
		}
		etas++
		at, _ := strconv.ParseFloat(row[4], 64)
		in, _ := strconv.ParseFloat(row[3], 64)
		secs, err := strconv.Atoi(row[5])
		if err != nil || secs <= 0 || at > in {
			t.Errorf("trace: buyer %s shown %q s at %s, admitted at %s; want a positive ETA before the admission", row[0], row[5], row[4], row[3])
		}
		if so := r.SoldOutSeconds; so != nil {
			turn := at + float64(secs)
			if turn < *so-0.01 {
				surelyBefore++
			}
			if turn < *so+0.01 {
				maybeBefore++
			}
		}
	}
	if admitted != r.Admission.Admitted || etas != r.ETA.First.N {
		t.Errorf("trace: %d admitted, %d with a first ETA; the report: %d and %d", admitted, etas, r.Admission.Admitted, r.ETA.First.N)
	}
	if b, a := r.ETA.FirstTurnBeforeSellOut.N, r.ETA.FirstTurnAfterSellOut.N; r.SoldOutSeconds != nil &&
		(b < surelyBefore || b > maybeBefore || b+a != etas) {
		t.Errorf("first ETAs split at the sell-out: %d before, %d after; the trace: %d-%d before of %d", b, a, surelyBefore, maybeBefore, etas)
	}
}

// TestCheckerCatchesDoubleSale feeds the SQL checks a database in which one seat was
// sold to two orders (the unique index that forbids it dropped first): they must say
// so. On the same database before the damage they find nothing.
func TestCheckerCatchesDoubleSale(t *testing.T) {
	t.Parallel()
	p := apptest.New(t, apptest.Options{})
	url, eventID := p.Config.DatabaseURL, p.EventID
	ctx := t.Context()
	pool, err := pgxpool.New(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	check, err := openSQL(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer check.Close()
	if v, err := check.violations(ctx, eventID, 3*time.Second); err != nil || len(v) != 0 {
		t.Fatalf("fresh event: got %q, %v; want no violation", v, err)
	}

	exec := func(sql string, args ...any) {
		t.Helper()
		if _, err := pool.Exec(ctx, sql, args...); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	exec(`DROP INDEX tickets_one_valid_per_seat`)
	var seat int64
	if err := pool.QueryRow(ctx, `SELECT min(id) FROM seats WHERE event_id = $1`, eventID).Scan(&seat); err != nil {
		t.Fatal(err)
	}
	for i, buyer := range []string{"ada", "bob"} {
		exec(`WITH h AS (INSERT INTO holds (event_id, buyer, seat_count, expires_at, sold_at)
		                 VALUES ($1, $2, 1, now() + interval '10 minutes', now()) RETURNING id),
		          o AS (INSERT INTO orders (event_id, hold_id, buyer, email, seat_ids, amount_cents, status, confirmed_at)
		                SELECT $1, h.id, $2, $2 || '@example.com', ARRAY[$3::bigint], 100, 'confirmed', now() FROM h RETURNING id)
		     INSERT INTO tickets (event_id, order_id, seat_id, code) SELECT $1, o.id, $3, 'code-' || $2 FROM o`,
			eventID, buyer, seat)
		if i == 0 {
			exec(`UPDATE seats SET sold_at = now(), order_id = (SELECT max(id) FROM orders) WHERE event_id = $1 AND id = $2`, eventID, seat)
		}
	}
	v, err := check.violations(ctx, eventID, 3*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, line := range v {
		found = found || strings.HasPrefix(line, "a seat sold twice: seat ")
	}
	if !found {
		t.Errorf("got %q, want a seat sold twice among the violations", v)
	}
}

// TestCheckHost: loopback only, unless the host is named.
func TestCheckHost(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		url, allow string
		ok         bool
	}{
		{"http://127.0.0.1:8080", "", true},
		{"http://localhost:8080", "", true},
		{"http://[::1]:8080", "", true},
		{"http://example.com", "", false},
		{"http://10.0.0.5:8080", "", false},
		{"http://example.com", "example.com", true},
		{"http://example.org", "example.com", false},
		{"ftp://127.0.0.1", "", false},
		{"127.0.0.1:8080", "", false},
	} {
		_, err := checkHost(tc.url, tc.allow)
		if (err == nil) != tc.ok {
			t.Errorf("checkHost(%q, %q): got %v, want ok %v", tc.url, tc.allow, err, tc.ok)
		}
	}
}

// TestParseMetrics: counters summed over their label sets; comments, quoted labels
// with spaces and braces, timestamps.
func TestParseMetrics(t *testing.T) {
	t.Parallel()
	fams, err := families(strings.NewReader(`# HELP boxoffice_holds_total Holds.
# TYPE boxoffice_holds_total counter
boxoffice_holds_total{kind="seats"} 12
boxoffice_holds_total{kind="ga"} 3 1700000000000
boxoffice_hold_conflicts_total{reason="a } b"} 4
boxoffice_orders_confirmed_total 7
`))
	if err != nil {
		t.Fatal(err)
	}
	m := sums(fams)
	for name, want := range map[string]float64{"boxoffice_holds_total": 15, "boxoffice_hold_conflicts_total": 4, "boxoffice_orders_confirmed_total": 7} {
		if m[name] != want {
			t.Errorf("%s: got %g, want %g", name, m[name], want)
		}
	}
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

// TestServerLimit: the server's admission limit is read for the run's event only, and
// summed up over the sale (from the onsale to the sell-out), not before or after it.
func TestServerLimit(t *testing.T) {
	t.Parallel()
	page := `# TYPE boxoffice_queue_admission_limit gauge
boxoffice_queue_admission_limit{event="3"} 80
boxoffice_queue_admission_limit{event="12"} 41.5
`
	fams, err := families(strings.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := gaugeOf(fams, limitMetric, "12"); !ok || v != 41.5 {
		t.Errorf("event 12: got %v, %v; want 41.5", v, ok)
	}
	if _, ok := gaugeOf(fams, limitMetric, "4"); ok {
		t.Error("event 4: got a value, want none")
	}
	if _, ok := gaugeOf(fams, "boxoffice_absent", "12"); ok {
		t.Error("a gauge the page lacks: got a value, want none")
	}
	timeline := []sample{
		{T: -2, Limit: 80}, {T: 1, Limit: 80}, {T: 2, Limit: 40}, {T: 3, Limit: 0}, // 0: not read
		{T: 4, Limit: 60}, {T: 9, Limit: 10}, // after the sell-out at 5 s
	}
	l := limitOver(timeline, 5, 80)
	if l == nil || l.Mean != 60 || l.Min != 40 || l.Max != 80 || l.Below != 2.0/3 {
		t.Errorf("got %+v, want mean 60, from 40 to 80, below the configured rate 2 of 3 readings", l)
	}
	if l := limitOver(timeline[:1], 0, 80); l != nil {
		t.Errorf("only a reading before the onsale: got %+v, want none", l)
	}
}

// TestMark: the sell-out times are those of the first map read after the onsale that
// showed them; a read before the onsale, and later reads, change nothing.
func TestMark(t *testing.T) {
	t.Parallel()
	onsale := time.Now()
	s := &sim{}
	at := func(sec int) time.Time { return onsale.Add(time.Duration(sec) * time.Second) }
	s.mark(&board{at: at(-1), sold: 5}, onsale) // before the onsale: not counted
	s.mark(&board{at: at(1), available: 3, sold: 2}, onsale)
	s.mark(&board{at: at(2), held: 2, sold: 3, gaRemaining: 1}, onsale) // places left
	s.mark(&board{at: at(3), held: 1, sold: 4}, onsale)                 // nothing to hold, one held
	s.mark(&board{at: at(4), sold: 5}, onsale)
	s.mark(&board{at: at(5), sold: 5}, onsale)
	if !s.soldOutAt.Equal(at(3)) || !s.allSoldAt.Equal(at(4)) || !s.seatsSoldAt.Equal(at(4)) {
		t.Errorf("sold out at %v, all sold at %v, seats sold at %v; want 3 s, 4 s, 4 s",
			s.soldOutAt.Sub(onsale), s.allSoldAt.Sub(onsale), s.seatsSoldAt.Sub(onsale))
	}
}

// TestMachineSpeed: the probe reads its thread's CPU for its fixed work, and the
// report sums the readings up over the sale: p10, p50 and p90 of the seconds and the
// share over 1.5 times p10, leaving out readings before the onsale, after the
// sell-out and none.
func TestMachineSpeed(t *testing.T) {
	t.Parallel()
	zw, err := gzip.NewWriterLevel(io.Discard, gzip.DefaultCompression)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 { // the second call reuses the writer
		if d, ok := probeOnce(zw); !ok || d <= 0 || d > time.Minute {
			t.Errorf("probe: got %v, %v; want a CPU time", d, ok)
		}
	}
	timeline := []sample{
		{T: -2, ProbeMs: 1},                              // before the onsale
		{T: 1, ProbeMs: 40}, {T: 2, ProbeMs: 30}, {T: 3}, // 0: not read
		{T: 4, ProbeMs: 70}, {T: 5, ProbeMs: 44}, {T: 6, ProbeMs: 46},
		{T: 9, ProbeMs: 200}, // after the sell-out at 8 s
	}
	sp := speedOver(timeline, 8)
	if sp == nil || sp.P10 != 30 || sp.P50 != 44 || sp.P90 != 70 || sp.Slow != 2.0/5 {
		t.Errorf("got %+v, want p10 30, p50 44, p90 70, 2 of 5 seconds over 45", sp)
	}
	if sp := speedOver(timeline[:1], 0); sp != nil {
		t.Errorf("only a reading before the onsale: got %+v, want none", sp)
	}
}

// TestETAFit: an ETA within 20 % of the wait counts as met; a miss is too short when
// the wait ran longer than shown, too long when it came sooner; waits under 30 s are
// counted apart as well.
func TestETAFit(t *testing.T) {
	t.Parallel()
	// shown, waited: within (100 for 110; 50 for 45), short (100 for 200; 100 for
	// 300), long (100 for 50), and a short wait within (10 for 11).
	f := fit([][2]float64{{100, 110}, {50, 45}, {100, 200}, {100, 300}, {100, 50}, {10, 11}})
	if f.N != 6 || f.Within20 != 0.5 || f.Short != 2.0/6 || f.Long != 1.0/6 {
		t.Errorf("got n %d, within %.2f, short %.2f, long %.2f; want 6, 0.50, 0.33, 0.17", f.N, f.Within20, f.Short, f.Long)
	}
	if f.N30 != 5 || f.Within2030 != 0.4 {
		t.Errorf("waits of 30 s or more: got %d, %.2f within; want 5, 0.40", f.N30, f.Within2030)
	}
	// Each error is relative to the wait: 10/110, 5/45, 100/200, 200/300, 50/50, 1/11.
	if want := 5.0 / 45; math.Abs(f.MedianErr-want) > 1e-9 {
		t.Errorf("median error: got %.4f, want %.4f (5/45)", f.MedianErr, want)
	}
}

// TestSmallOnsaleFront is TestSmallOnsale through the front door: the buyers take
// signed places (no session before their turn) and claim at the turn the board shows.
// It must sell out as well, break no invariant, meet no unexpected answer, and keep
// the shoppers within the slots.
func TestSmallOnsaleFront(t *testing.T) {
	t.Parallel()
	r, _ := smallOnsale(t, "-front")
	for _, v := range r.Violations {
		t.Errorf("invariant broken: %s", v)
	}
	for k, n := range r.Errors {
		t.Errorf("error %s: %d times, want none", k, n)
	}
	if r.SoldOutSeconds == nil || r.Counts.Confirmed == 0 || r.Admission.Admitted == 0 || r.Fairness.PreQueue == 0 {
		t.Errorf("sold out %v, %d orders confirmed, %d admitted, %d in the pre-queue; want sold out and some of each",
			r.SoldOutSeconds, r.Counts.Confirmed, r.Admission.Admitted, r.Fairness.PreQueue)
	}
	// The cursor keeps to the slots, and the claim does too: a place claimed after its
	// window, or counted after the cursor passed its group (an instance's flush late
	// on a loaded machine), waits for a free slot rather than go in over them.
	if r.Admission.MaxShopping > 40 {
		t.Errorf("at most %d shopping at once, want at most the 40 slots", r.Admission.MaxShopping)
	}
}
