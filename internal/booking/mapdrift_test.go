package booking

import (
	"io"
	"log/slog"
	"slices"
	"testing"
	"time"

	"boxoffice/internal/dbtest"
	"boxoffice/internal/demo"
)

// BenchmarkSeatMapDrift: one drift check of a 50,000-seat event whose cached map
// agrees with the database, the case of nearly every run (once a second per watched
// event during a sale).
func BenchmarkSeatMapDrift(b *testing.B) {
	pool := dbtest.Pool(b)
	event, err := demo.Create(b.Context(), pool, demo.BigSpec("drift", 50000, time.Now()))
	if err != nil {
		b.Fatal(err)
	}
	svc := New(pool, Config{MapMaxAge: time.Hour}, nil, nil, slog.New(slog.NewTextHandler(io.Discard, nil)))
	m, err := svc.Maps.SeatMap(b.Context(), event)
	if err != nil {
		b.Fatal(err)
	}
	if len(m.Seats) < 50000 {
		b.Fatalf("got %d seats, want 50,000", len(m.Seats))
	}
	b.ReportAllocs()
	for b.Loop() {
		seats, ga, _, err := svc.Maps.SeatMapDrift(b.Context(), event)
		if err != nil || len(seats) != 0 || ga {
			b.Fatalf("got %d seats, GA %v, error %v; want no drift", len(seats), ga, err)
		}
	}
}

// TestSeatMapDriftFindsUnannounced: changes made behind the cache's back (no notifier:
// nothing patches the map) are reported, seat by seat and the GA places, and only
// they, each hold and sale as a seat the map shows free (shownFree); a hold that
// lapsed before the map saw it shows as the available seat the cache has, and a map
// read after the changes shows no drift until a hold it showed lapses, which is drift
// the map shows taken (shownFree 0). The control is the first call: with nothing
// changed, nothing is reported.
func TestSeatMapDriftFindsUnannounced(t *testing.T) {
	t.Parallel()
	f := newFixture(t, smallSpec([]demo.Section{oneRow("Stalls", 6, 4000)},
		demo.GATier{Name: "Floor", PriceCents: 2000, Capacity: 20, Stripes: 2}), Config{MapMaxAge: time.Hour})
	ids := f.rowSeats(t, "Stalls", "A")
	if _, err := f.svc.Maps.SeatMap(t.Context(), f.event); err != nil {
		t.Fatal(err)
	}
	if seats, ga, _, err := f.svc.Maps.SeatMapDrift(t.Context(), f.event); err != nil || len(seats) != 0 || ga {
		t.Fatalf("nothing changed: got seats %v, GA %v, error %v; want no drift", seats, ga, err)
	}

	held := f.hold(t, "held", ids[0])
	sold := f.checkout(t, f.hold(t, "sold", ids[1]), "sold")
	if out := f.pay(t, sold, "evt_drift"); out != OutcomeConfirmed {
		t.Fatalf("pay: got %s, want %s", out, OutcomeConfirmed)
	}
	f.lapse(t, f.hold(t, "lapsed", ids[2]).ID)
	if _, err := f.holdGA(t, "standing", 2); err != nil {
		t.Fatal(err)
	}

	seats, ga, shownFree, err := f.svc.Maps.SeatMapDrift(t.Context(), f.event)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(seats)
	if want := ids[:2]; !slices.Equal(seats, want) || !ga || shownFree != 3 {
		t.Errorf("after the changes: got seats %v, GA %v, shown free %d; want seats %v (held, sold), GA true, 3 shown free", seats, ga, shownFree, want)
	}

	fresh := f.withService(Config{MapMaxAge: time.Hour})
	m, err := fresh.svc.Maps.SeatMap(t.Context(), f.event)
	if err != nil {
		t.Fatal(err)
	}
	if seats, ga, _, err := fresh.svc.Maps.SeatMapDrift(t.Context(), f.event); err != nil || len(seats) != 0 || ga {
		t.Errorf("map read after the changes: got seats %v, GA %v, error %v; want no drift", seats, ga, err)
	}
	want := map[int64]string{ids[0]: "held", ids[1]: "sold", ids[2]: "available"}
	for _, st := range m.Seats {
		if w, ok := want[st.ID]; ok && st.Status != w {
			t.Errorf("seat %d: got status %q, want %q", st.ID, st.Status, w)
		}
	}

	f.lapse(t, held.ID)
	seats, ga, shownFree, err = fresh.svc.Maps.SeatMapDrift(t.Context(), f.event)
	if err != nil || !slices.Equal(seats, ids[:1]) || ga || shownFree != 0 {
		t.Errorf("a hold the map showed, lapsed: got seats %v, GA %v, shown free %d, error %v; want seat %d, no GA, none shown free",
			seats, ga, shownFree, err, ids[0])
	}
}

// TestSeatStatusesAgreeWithSeatMap: the drift check's compact read gives every seat the
// first letter of the status the whole map shows, whatever the seat's state (free,
// held, sold, held but lapsed), and the GA places the map shows.
func TestSeatStatusesAgreeWithSeatMap(t *testing.T) {
	t.Parallel()
	f := newFixture(t, smallSpec([]demo.Section{oneRow("Stalls", 6, 4000)},
		demo.GATier{Name: "Floor", PriceCents: 2000, Capacity: 20, Stripes: 2}), Config{MapMaxAge: time.Hour})
	ids := f.rowSeats(t, "Stalls", "A")
	f.hold(t, "held", ids[0])
	sold := f.checkout(t, f.hold(t, "sold", ids[1]), "sold")
	f.pay(t, sold, "evt_statuses")
	f.lapse(t, f.hold(t, "lapsed", ids[2]).ID)
	if _, err := f.holdGA(t, "standing", 3); err != nil {
		t.Fatal(err)
	}

	m, err := f.svc.Maps.SeatMap(t.Context(), f.event)
	if err != nil {
		t.Fatal(err)
	}
	st, err := f.svc.store.q.SeatStatuses(t.Context(), f.event)
	if err != nil {
		t.Fatal(err)
	}
	letter := map[int64]byte{}
	for i, id := range st.Ids {
		letter[id] = st.Statuses[i]
	}
	if len(letter) != len(m.Seats) || len(st.Statuses) != len(st.Ids) {
		t.Fatalf("got %d ids and %d letters, want one each for the map's %d seats", len(st.Ids), len(st.Statuses), len(m.Seats))
	}
	kinds := map[string]bool{}
	for _, s := range m.Seats {
		kinds[s.Status] = true
		if letter[s.ID] != s.Status[0] {
			t.Errorf("seat %d: got letter %q, want the first of %q", s.ID, letter[s.ID], s.Status)
		}
	}
	if len(kinds) != 3 {
		t.Errorf("the map shows statuses %v, want all three (the test's set-up)", kinds)
	}
	if len(st.GaTierIds) != len(m.GATiers) {
		t.Fatalf("got %d GA tiers, want the map's %d", len(st.GaTierIds), len(m.GATiers))
	}
	for i, id := range st.GaTierIds {
		for _, tier := range m.GATiers {
			if tier.ID == id && int(st.GaRemaining[i]) != tier.Remaining {
				t.Errorf("tier %d: got %d places left, want the map's %d", id, st.GaRemaining[i], tier.Remaining)
			}
		}
	}
	if m.GATiers[0].Remaining != 17 {
		t.Errorf("the map shows %d places left, want 17 (20 less the 3 held)", m.GATiers[0].Remaining)
	}
}
