package main

import (
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	"boxoffice/internal/benchkit"
)

// walkSeat picks the next seat of a client's own walk through the event: client k of
// c claims seats k, k+c, k+2c… (from :n, which pgbench keeps per client across
// transactions), so no two clients ever ask for the same seat and, while the event
// has seats left, every attempt finds its seat free. Random picks would make
// pgbench's tps count mostly refusals once the event fills: its ceiling would count
// cheap refusals where the API's holds/s counts claims.
const walkSeat = `\set n :n + 1
\set id :min_id + :client_id + :clients * :n
`

// pgbenchScript is SeatHold's conditional claim (queries/seats.sql) for the client's
// next seat, as one autocommitted statement: the ceiling the API's one-seat hold is
// measured against.
const pgbenchScript = walkSeat + `UPDATE seats SET held_by = :hold, hold_expires_at = now() + interval '10 minutes'
WHERE event_id = :event AND id = :id AND sold_at IS NULL
  AND (held_by IS NULL OR hold_expires_at <= now());
`

// pgbenchSpec is what pgbench runs: a script, in the simple or the prepared protocol.
type pgbenchSpec struct {
	Name     string
	Script   string
	Prepared bool // -M prepared, as pgx sends statements
}

// claimSpec is the ceiling of the exact holds.
var claimSpec = pgbenchSpec{Name: "pgbench, the same UPDATE", Script: pgbenchScript}

// decomposeSpecs (-decompose) run, with pgbench, what the server sends PostgreSQL for
// one exact hold: the same UPDATE in the prepared protocol pgx uses, hold_seats() (the
// hold's one statement; migrations/functions/hold_seats.sql) with a new buyer each time,
// and that plus the session lookup every request makes. The API against these tells
// the time spent in SQL from the time spent in Go, HTTP and round trips.
var decomposeSpecs = []pgbenchSpec{
	{Name: "pgbench, the same UPDATE, -M prepared", Script: pgbenchScript, Prepared: true},
	{Name: "pgbench, hold_seats(), -M prepared", Prepared: true, Script: walkSeat + `\set b random(1, 1000000000)
SELECT * FROM hold_seats(:event, 'pgbench-' || :b, ARRAY[:id]::bigint[], 600, 10);
`},
	{Name: "pgbench, session lookup + hold_seats(), -M prepared", Prepared: true, Script: walkSeat + `\set b random(1, 1000000000)
\set t random(1, :tokens)
SELECT data FROM sessions WHERE token = (SELECT token FROM bench_tokens WHERE i = :t) AND expiry > now();
SELECT * FROM hold_seats(:event, 'pgbench-' || :b, ARRAY[:id]::bigint[], 600, 10);
`},
}

// pgbenchResult is the measured pgbench run.
type pgbenchResult struct {
	Name         string
	TPS          float64
	Transactions int64
	Claimed      int // seats the measured run held
	LatencyMS    float64
	FillAfter    float64
	CPU          benchkit.CPUUse
	Seconds      int
	Command      string
	Plans        string
}

var (
	tpsRe     = regexp.MustCompile(`tps = ([0-9.]+) \(without initial connection time\)`)
	txRe      = regexp.MustCompile(`number of transactions actually processed: ([0-9]+)`)
	latencyRe = regexp.MustCompile(`latency average = ([0-9.]+) ms`)
)

// runPgbench runs the script on ev for the warm-up, then, measured, for the duration:
// the measured run starts on an event as full as the API's measured window did.
func runPgbench(ctx context.Context, srv *server, ev event, o options, spec pgbenchSpec) (pgbenchResult, error) {
	res := pgbenchResult{Name: spec.Name}
	if ev.MaxID-ev.MinID+1 != int64(len(ev.SeatIDs)) {
		return res, fmt.Errorf("the event's seat ids are not contiguous (%d..%d for %d seats)", ev.MinID, ev.MaxID, len(ev.SeatIDs))
	}
	var hold int64
	err := srv.setup.QueryRow(ctx, `INSERT INTO holds (event_id, buyer, seat_count, expires_at)
		VALUES ($1, 'bench-pgbench', 0, now() + interval '10 minutes') RETURNING id`, ev.ID).Scan(&hold)
	if err != nil {
		return res, err
	}
	tokens := 1
	if strings.Contains(spec.Script, ":tokens") {
		if tokens, err = srv.sessionTokens(ctx); err != nil {
			return res, err
		}
	}
	var before int
	// The measured run's walks start past every seat the warm-up reached.
	reached := func() (int64, error) {
		var last int64
		err := srv.setup.QueryRow(ctx, `SELECT coalesce(max(id) - $2 + 1, 0) FROM seats
			WHERE event_id = $1 AND held_by IS NOT NULL`, ev.ID, ev.MinID).Scan(&last)
		if err == nil {
			before, err = srv.heldSeats(ctx, ev.ID)
		}
		return last, err
	}
	w, err := pgbenchWindow(ctx, srv, o, spec, reached, "event", ev.ID, "hold", hold,
		"min_id", ev.MinID, "max_id", ev.MaxID, "tokens", int64(tokens))
	if err != nil {
		return res, err
	}
	if w.tps == 0 {
		return res, fmt.Errorf("pgbench: no tps in its answer:\n%s", w.out)
	}
	res.TPS, res.Transactions, res.LatencyMS = w.tps, w.transactions, w.latencyMS
	res.Seconds, res.Command, res.CPU = w.seconds, w.command, w.cpu
	after, err := srv.heldSeats(ctx, ev.ID)
	if err != nil {
		return res, err
	}
	res.Claimed = after - before
	res.FillAfter = float64(after) / float64(len(ev.SeatIDs))
	return res, nil
}

// pgbenchRun is what pgbench answered for a measured window.
type pgbenchRun struct {
	out          []byte
	tps          float64
	transactions int64
	latencyMS    float64
	seconds      int
	command      string
	cpu          benchkit.CPUUse
}

// pgbenchWindow runs spec with the variables vars (names and values, in turn), each
// client walking from :n, for the warm-up and then, measured, for the duration, both
// rounded up to whole seconds. The measured run's walks go on from where the
// warm-up's ended: reached says how far (in the walk's units, the orders or seats
// taken) once the warm-up is over.
func pgbenchWindow(ctx context.Context, srv *server, o options, spec pgbenchSpec, reached func() (int64, error), vars ...any) (pgbenchRun, error) {
	var run pgbenchRun
	dir, err := os.MkdirTemp("", "bench")
	if err != nil {
		return run, err
	}
	defer os.RemoveAll(dir)
	script := filepath.Join(dir, "script.sql")
	if err := os.WriteFile(script, []byte(spec.Script), 0o644); err != nil {
		return run, err
	}
	args := func(secs int, from int64) []string {
		a := []string{"-n", "-c", strconv.Itoa(o.clients), "-j", strconv.Itoa(o.threads), "-T", strconv.Itoa(secs),
			"-D", fmt.Sprintf("n=%d", from-1), "-D", fmt.Sprintf("clients=%d", o.clients)}
		for i := 0; i+1 < len(vars); i += 2 {
			a = append(a, "-D", fmt.Sprintf("%s=%d", vars[i], vars[i+1]))
		}
		if spec.Prepared {
			a = append(a, "-M", "prepared")
		}
		return append(a, "-f", script, srv.Config.DatabaseURL)
	}
	if w := wholeSeconds(o.warmup); w > 0 {
		if _, _, err := pgbench(ctx, args(w, 0)); err != nil {
			return run, err
		}
	}
	last, err := reached()
	if err != nil {
		return run, err
	}
	run.seconds = wholeSeconds(o.duration)
	cmdArgs := args(run.seconds, (last+int64(o.clients)-1)/int64(o.clients))
	run.command = "pgbench " + strings.Join(cmdArgs[:len(cmdArgs)-1], " ") + " <bench database URL>"
	meter := benchkit.StartCPUMeter(ctx, srv.backends("pgbench"))
	out, used, err := pgbench(ctx, cmdArgs)
	run.out, run.cpu = out, meter.Stop(used)
	if err != nil {
		return run, err
	}
	if m := tpsRe.FindSubmatch(out); m != nil {
		run.tps, _ = strconv.ParseFloat(string(m[1]), 64)
	}
	if m := txRe.FindSubmatch(out); m != nil {
		run.transactions, _ = strconv.ParseInt(string(m[1]), 10, 64)
	}
	if m := latencyRe.FindSubmatch(out); m != nil {
		run.latencyMS, _ = strconv.ParseFloat(string(m[1]), 64)
	}
	return run, nil
}

// pgbench runs pgbench and returns its output and the CPU time it used.
func pgbench(ctx context.Context, args []string) ([]byte, time.Duration, error) {
	cmd := exec.CommandContext(ctx, "pgbench", args...)
	cmd.WaitDelay = 5 * time.Second
	out, err := cmd.CombinedOutput()
	if err != nil {
		return out, 0, fmt.Errorf("pgbench: %w\n%s", err, out)
	}
	var used time.Duration
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		used = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	return out, used, nil
}

func wholeSeconds(d time.Duration) int { return int(math.Ceil(d.Seconds())) }
