package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// testLayout is a layout as the server might list it: not in the order a buyer reads
// the hall. Section "Stalls" has rows B, A and AA (front to back: A, B, AA) with a gap
// between seats 3 and 5 of row A; "Circle" has one row.
func testLayout() layoutJSON {
	return layoutJSON{Layout: "L1", Seats: []seatJSON{
		{ID: 1, Section: "Stalls", Row: "B", Number: 2},
		{ID: 2, Section: "Stalls", Row: "A", Number: 5},
		{ID: 3, Section: "Stalls", Row: "A", Number: 1},
		{ID: 4, Section: "Circle", Row: "A", Number: 1},
		{ID: 5, Section: "Stalls", Row: "AA", Number: 1},
		{ID: 6, Section: "Stalls", Row: "A", Number: 3},
		{ID: 7, Section: "Stalls", Row: "A", Number: 2},
		{ID: 8, Section: "Stalls", Row: "B", Number: 1},
	}}
}

// TestBoard: the layout is arranged front row first, seats by number; the statuses
// are counted; picking finds only seats the statuses show available and side by side
// (a gap in the numbers parts them).
func TestBoard(t *testing.T) {
	t.Parallel()
	lay := arrange(testLayout())
	var got []string
	for _, rows := range lay.sections {
		var sec []string
		for _, row := range rows {
			var ids []string
			for _, k := range row {
				ids = append(ids, fmt.Sprint(lay.seats[k].ID))
			}
			sec = append(sec, strings.Join(ids, ","))
		}
		got = append(got, strings.Join(sec, " / "))
	}
	if want := []string{"3,7,6,2 / 8,1 / 5", "4"}; !slices.Equal(got, want) {
		t.Fatalf("arranged: got %q, want %q (rows front first, seats by number)", got, want)
	}

	//                  ids: 1    2    3    4    5    6    7    8
	b, err := newBoard(lay, statusesJSON{Layout: "L1", Statuses: "saahaaha", GATiers: []gaTierJSON{{ID: 9, Remaining: 0}, {ID: 10, Remaining: 4}}})
	if err != nil {
		t.Fatal(err)
	}
	if b.available != 5 || b.held != 2 || b.sold != 1 || b.gaTier != 10 || b.gaRemaining != 4 {
		t.Errorf("counts: %d available, %d held, %d sold, tier %d with %d; want 5, 2, 1, tier 10 with 4", b.available, b.held, b.sold, b.gaTier, b.gaRemaining)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	rowA := lay.sections[0][0] // seats 1 (id 3), 2 (id 7, held), 3 (id 6), 5 (id 2)
	for range 20 {
		if ids := b.adjacent(rowA, 1, rng); len(ids) != 1 || !slices.Contains([]int64{3, 6, 2}, ids[0]) {
			t.Fatalf("one seat of row A: got %v, want 3, 6 or 2", ids)
		}
	}
	if ids := b.adjacent(rowA, 2, rng); ids != nil {
		t.Errorf("two side by side in row A (seat 2 held, no seat 4): got %v, want none", ids)
	}
	if ids := b.adjacent(lay.sections[0][1], 2, rng); ids != nil {
		t.Errorf("two in row B (seat 2 sold): got %v, want none", ids)
	}
	b2, _ := newBoard(lay, statusesJSON{Layout: "L1", Statuses: "aaaaaaaa"})
	if ids := b2.adjacent(rowA, 3, rng); !reflect.DeepEqual(ids, []int64{3, 7, 6}) {
		t.Errorf("three side by side in row A, all free: got %v, want [3 7 6]", ids)
	}

	for _, bad := range []string{"aaaa", "aaaaaaaaa", "aaaaaaax"} {
		if _, err := newBoard(lay, statusesJSON{Layout: "L1", Statuses: bad}); err == nil {
			t.Errorf("statuses %q for 8 seats: no error", bad)
		}
	}
}

// TestBoardReadsLayoutOnce: the layout is read with the first statuses and again only
// when the statuses name another; a layout that is not the one asked for is an error.
func TestBoardReadsLayoutOnce(t *testing.T) {
	t.Parallel()
	var layoutID atomic.Value
	layoutID.Store("L1")
	var layoutReads atomic.Int32
	var served atomic.Value // the layout id the layout route answers with, if set
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := layoutID.Load().(string)
		switch r.URL.Path {
		case "/api/v1/events/7/seatmap/statuses":
			json.NewEncoder(w).Encode(statusesJSON{Layout: id, Statuses: "aaaaaaaa"})
		case "/api/v1/events/7/seatmap/layout":
			layoutReads.Add(1)
			if r.URL.Query().Get("v") != id {
				t.Errorf("layout asked for as %q, want %q", r.URL.Query().Get("v"), id)
			}
			l := testLayout()
			l.Layout = id
			if s, ok := served.Load().(string); ok {
				l.Layout = s
			}
			json.NewEncoder(w).Encode(l)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	c := newClient(srv.URL, srv.Client().Transport, 5*time.Second)
	var sb seatBoard
	ctx := context.Background()
	for range 3 {
		if _, err := sb.fetch(ctx, c, "7"); err != nil {
			t.Fatal(err)
		}
	}
	if n := layoutReads.Load(); n != 1 {
		t.Errorf("three reads of one layout: the layout read %d times, want once", n)
	}
	layoutID.Store("L2")
	b, err := sb.fetch(ctx, c, "7")
	if err != nil {
		t.Fatal(err)
	}
	if n := layoutReads.Load(); n != 2 || b.lay.id != "L2" {
		t.Errorf("statuses of another layout: %d layout reads, board of %q; want 2, L2", n, b.lay.id)
	}
	layoutID.Store("L3")
	served.Store("L4")
	if _, err := sb.fetch(ctx, c, "7"); err == nil || sb.cur.Load().lay.id != "L2" {
		t.Errorf("layout L4 answered for L3: err %v, board of %q; want an error and the board kept", err, sb.cur.Load().lay.id)
	}
}

// BenchmarkSeatMapRead: a 50,000-seat map's statuses read and counted, the layout kept.
func BenchmarkSeatMapRead(b *testing.B) {
	l := layoutJSON{Layout: "L"}
	var statuses []byte
	for i := range 50_000 {
		l.Seats = append(l.Seats, seatJSON{ID: int64(i + 1), Section: fmt.Sprint("S", i/2000), Row: fmt.Sprint("R", i/50%40), Number: i%50 + 1})
		statuses = append(statuses, "ahs"[i%3])
	}
	raw, err := json.Marshal(statusesJSON{Layout: "L", Statuses: string(statuses)})
	if err != nil {
		b.Fatal(err)
	}
	lay := arrange(l)
	for b.Loop() {
		var st statusesJSON
		if err := json.Unmarshal(raw, &st); err != nil {
			b.Fatal(err)
		}
		if _, err := newBoard(lay, st); err != nil {
			b.Fatal(err)
		}
	}
}
