package replica_test

import (
	"context"
	"testing"
	"time"

	"boxoffice/internal/dbtest"
	"boxoffice/internal/replica"
)

// measureUntil measures until the chooser's answer is want, or fails the test. With
// ok, only a measurement that succeeded counts: the answer comes from the lag, not
// from a failure to measure it.
func measureUntil(t *testing.T, r *replica.Reads, want, ok bool, what string) {
	t.Helper()
	dbtest.Eventually(t, what, 20*time.Second, func() bool {
		err := r.Measure(context.Background())
		return (err == nil || !ok) && r.UseReplica() == want
	})
}

// TestReplicaLag: with a real streaming replica, reads go to it while it keeps up;
// when its replay is paused and the primary writes, they go back to the primary once
// the replica is MaxLag behind, and to the replica again once it has caught up; a
// replica that stops answering sends them to the primary.
func TestReplicaLag(t *testing.T) {
	t.Parallel()
	pair := dbtest.StartPostgresPair(t)
	primary, rep := pair.Pools(t)
	const maxLag = 400 * time.Millisecond
	r := replica.New(primary, rep, replica.Options{MaxLag: maxLag, Every: 50 * time.Millisecond})
	if r.UseReplica() {
		t.Fatal("before any measurement: got the replica, want the primary")
	}
	measureUntil(t, r, true, true, "a caught-up replica chosen")
	if r.Pool() != rep {
		t.Fatal("Pool: got the primary, want the replica while it keeps up")
	}

	ctx := t.Context()
	if _, err := rep.Exec(ctx, "SELECT pg_wal_replay_pause()"); err != nil {
		t.Fatal(err)
	}
	if _, err := primary.Exec(ctx, "CREATE TABLE written (n int); INSERT INTO written VALUES (1)"); err != nil {
		t.Fatal(err)
	}
	measureUntil(t, r, false, true, "a paused replica given up")
	// Given up by its lag, then found behind every position noted within MaxLag:
	// the positions from before the write are forgotten.
	dbtest.Eventually(t, "a paused replica behind every noted position", 20*time.Second, func() bool {
		err := r.Measure(context.Background())
		_, _, ok := r.Lag()
		return err == nil && !ok
	})
	if r.Pool() != primary {
		t.Fatal("Pool: got the replica, want the primary while the replica lags")
	}
	if _, err := rep.Exec(ctx, "SELECT pg_wal_replay_resume()"); err != nil {
		t.Fatal(err)
	}
	measureUntil(t, r, true, true, "a replica that caught up chosen again")
	// Chosen again only once it has replayed the write: the marks from before the
	// write are older than MaxLag by now.
	var n int
	if err := rep.QueryRow(ctx, "SELECT count(*) FROM written").Scan(&n); err != nil || n != 1 {
		t.Fatalf("the write on the replica chosen again: got %d (%v), want 1", n, err)
	}

	pair.StopReplica(t)
	measureUntil(t, r, false, false, "a stopped replica given up")
}

// TestNotAReplica: a server that is not in recovery (a URL naming a primary, or a
// promoted replica) is never chosen, however current it looks.
func TestNotAReplica(t *testing.T) {
	t.Parallel()
	r := replica.New(dbtest.Pool(t), dbtest.Pool(t), replica.Options{})
	if err := r.Measure(t.Context()); err == nil {
		t.Fatal("measuring a primary as the replica: got no error, want one")
	}
	if r.UseReplica() {
		t.Fatal("a primary as the replica: chosen, want the primary")
	}
}

// TestNoReplica: without a replica every read goes to the primary.
func TestNoReplica(t *testing.T) {
	t.Parallel()
	p := dbtest.Pool(t)
	r := replica.New(p, nil, replica.Options{})
	if err := r.Measure(t.Context()); err != nil {
		t.Fatal(err)
	}
	if r.Pool() != p || r.UseReplica() {
		t.Fatal("no replica: got the replica chosen, want the primary")
	}
}

// TestStaleReadsOutliveTheReplica: a stale-tolerant read that finds the replica gone
// (stopped since the last measurement, which still chose it) answers from the primary
// at once, by QueryRow and by Query, and later reads go straight to the primary. The
// control: the same read on the pool the chooser still names fails.
func TestStaleReadsOutliveTheReplica(t *testing.T) {
	t.Parallel()
	pair := dbtest.StartPostgresPair(t)
	primary, rep := pair.Pools(t)
	// A still clock: the measurement that chose the replica never ages, so nothing but
	// the failed read itself can move the reads to the primary.
	still := time.Now()
	r := replica.New(primary, rep, replica.Options{Every: time.Hour, Now: func() time.Time { return still }})
	measureUntil(t, r, true, true, "a caught-up replica chosen")
	// A second chooser, measured now too, for the Query after the stop.
	r2 := replica.New(primary, rep, replica.Options{Every: time.Hour, Now: func() time.Time { return still }})
	measureUntil(t, r2, true, true, "a caught-up replica chosen by the second chooser")
	ctx := t.Context()
	stale := r.Stale()
	var where bool
	if err := stale.QueryRow(ctx, "SELECT pg_is_in_recovery()").Scan(&where); err != nil || !where {
		t.Fatalf("a read before the stop: in recovery %v (%v), want it answered by the replica", where, err)
	}

	pair.StopReplica(t)
	if !r.UseReplica() {
		t.Fatal("after the stop, before any read: the chooser gave the replica up already; the test shows nothing")
	}
	var n int
	if err := r.Pool().QueryRow(ctx, "SELECT 1").Scan(&n); err == nil {
		t.Fatal("control: a read on the stopped replica succeeded; the test shows nothing")
	}
	if err := stale.QueryRow(ctx, "SELECT pg_is_in_recovery()").Scan(&where); err != nil || where {
		t.Fatalf("QueryRow after the stop: in recovery %v, err %v; want the primary's answer", where, err)
	}
	if r.UseReplica() {
		t.Fatal("after a read found the replica gone: still chosen, want the primary until it measures well")
	}

	// Query, through the second chooser, which still names the stopped replica.
	rows, err := r2.Stale().Query(ctx, "SELECT pg_is_in_recovery() FROM generate_series(1, 3)")
	if err != nil {
		t.Fatalf("Query after the stop: %v", err)
	}
	got := 0
	for rows.Next() {
		if err := rows.Scan(&where); err != nil || where {
			t.Fatalf("Query after the stop: a row in recovery %v (%v), want the primary's", where, err)
		}
		got++
	}
	if err := rows.Err(); err != nil || got != 3 {
		t.Fatalf("Query after the stop: %d rows (%v), want 3 from the primary", got, err)
	}
}
