package main

import (
	"errors"
	"flag"
	"io"
	"strings"
	"testing"

	"boxoffice/internal/benchkit"
)

func TestAnswerKey(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		status int
		body   string
		want   string
	}{
		{409, `{"error":"seat_unavailable","message":"x","conflictingSeatIds":[7]}`, "409 seat_unavailable"},
		{409, `{"error":"busy","message":"Seats are selling very fast right now; ask again."}`, "409 busy"},
		{503, `{"error":"unavailable"}`, "503 unavailable"},
		{502, `Bad Gateway`, "502 ?"},
	} {
		if got := answerKey(tc.status, []byte(tc.body)); got != tc.want {
			t.Errorf("answerKey(%d, %s): got %q, want %q", tc.status, tc.body, got, tc.want)
		}
	}
}

func TestQueryName(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ sql, want string }{
		{"-- name: SeatHold :many\nWITH target AS (...)", "SeatHold"},
		{"begin", "begin"},
		{"  COMMIT", "commit"},
		{"savepoint sp_1", "savepoint"},
	} {
		if got := queryName(tc.sql); got != tc.want {
			t.Errorf("queryName(%q): got %q, want %q", tc.sql, got, tc.want)
		}
	}
}

func TestIndexByID(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		plan string
		want bool
	}{
		{"Index Scan using seats_pkey on seats  (cost=0.29..8.32 rows=1 width=22)\n  Index Cond: ((event_id = 1) AND (id = 777))", true},
		{"Index Scan using seats_pkey on seats\n  Index Cond: ((event_id = 2) AND (id = ANY ('{60001}'::bigint[])))", true},
		{"Index Scan using seats_pkey on seats\n  Index Cond: (event_id = 2)\n  Filter: ((sold_at IS NULL) AND (id = ANY ('{60001}'::bigint[])))", false},
		{"Index Scan using seats_event_id_section_row_label_number_key on seats\n  Index Cond: (event_id = 2)\n  Filter: (id = 60000)", false},
	} {
		if got := indexByIDRe.MatchString(tc.plan); got != tc.want {
			t.Errorf("plan %q: by id got %v, want %v", tc.plan, got, tc.want)
		}
	}
}

func TestPgbenchOutput(t *testing.T) {
	t.Parallel()
	out := []byte(`transaction type: /tmp/hold.sql
number of transactions actually processed: 34645
number of failed transactions: 0 (0.000%)
latency average = 9.012 ms
initial connection time = 52.100 ms
tps = 3557.123456 (without initial connection time)
`)
	if m := tpsRe.FindSubmatch(out); m == nil || string(m[1]) != "3557.123456" {
		t.Errorf("tps: got %q, want 3557.123456", m)
	}
	if m := txRe.FindSubmatch(out); m == nil || string(m[1]) != "34645" {
		t.Errorf("transactions: got %q, want 34645", m)
	}
	if m := latencyRe.FindSubmatch(out); m == nil || string(m[1]) != "9.012" {
		t.Errorf("latency: got %q, want 9.012", m)
	}
}

func TestOptions(t *testing.T) {
	t.Parallel()
	env := benchkit.Env{Stderr: io.Discard}
	for _, tc := range []struct {
		b    benchmark
		args []string
		ok   bool
	}{
		{holdsBench{}, nil, true},
		{holdsBench{}, []string{"-rounds", "3", "-decompose"}, true},
		{holdsBench{}, []string{"-seats", "5000"}, true},
		{bestBench{}, []string{"-seats", "5000"}, false}, // fewer seats than the 20,000 held
		{bestBench{}, []string{"-seats", "5000", "-held", "1000"}, true},
		{holdsBench{}, []string{"-held", "1000"}, false}, // -held is best's
		{confirmBench{}, []string{"-clients", "64", "-confirm-orders", "32"}, false},
		{arriveBench{}, []string{"-duration", "500ms"}, false},
		{holdsBench{}, []string{"-pgbench-threads", "64"}, false},
		{arriveBench{}, []string{"extra"}, false},
	} {
		_, err := parseOptions("test", tc.b, tc.args, env)
		if (err == nil) != tc.ok {
			t.Errorf("%T %q: got error %v, want ok=%v", tc.b, tc.args, err, tc.ok)
		}
	}
}

// TestDispatch: bench names its commands in its help and runs the one named; an
// unknown one fails with the usage, help of a command lists its flags.
func TestDispatch(t *testing.T) {
	t.Parallel()
	var out, errs strings.Builder
	env := benchkit.Env{Stdout: &out, Stderr: &errs, Getenv: func(string) string { return "" }}
	run := func(args ...string) error {
		out.Reset()
		errs.Reset()
		return benchkit.Dispatch(t.Context(), "bench", doc, commands(), args, env)
	}
	if err := run("help"); err != nil || !strings.Contains(out.String(), "holds") || !strings.Contains(out.String(), "sse") {
		t.Errorf("bench help: got %v and %q, want the commands listed", err, out.String())
	}
	if err := run("help", "best"); !errors.Is(err, flag.ErrHelp) || !strings.Contains(errs.String(), "-held") {
		t.Errorf("bench help best: got %v and %q, want best's flags", err, errs.String())
	}
	if err := run("everything"); err == nil || !strings.Contains(errs.String(), "Commands:") {
		t.Errorf("bench everything: got %v and %q, want an error and the usage", err, errs.String())
	}
	if err := run("holds"); err == nil || !strings.Contains(err.Error(), "DATABASE_URL") {
		t.Errorf("bench holds without DATABASE_URL: got %v, want it named", err)
	}
}

// TestInPreQueue: an arrival counts only when the join put the visitor in the
// pre-queue; an admission (the room let them by), a queue place after the onsale, an
// error's body or no JSON at all is not the arrival being measured.
func TestInPreQueue(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		body string
		want bool
	}{
		{`{"admitted":false,"position":0,"preQueue":true,"waiting":12}`, true},
		{`{"admitted":true,"token":"x","preQueue":false}`, false},
		{`{"admitted":false,"position":7}`, false},
		{`{"error":"queue_paused"}`, false},
		{`Service Unavailable`, false},
	} {
		if got := inPreQueue([]byte(tc.body)); got != tc.want {
			t.Errorf("inPreQueue(%s) = %v, want %v", tc.body, got, tc.want)
		}
	}
}
