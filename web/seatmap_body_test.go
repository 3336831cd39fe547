package web

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"sync"
	"testing"
	"time"

	"boxoffice/internal/booking"
)

// stadiumMap is a map of n seats, a third of them held or sold.
func stadiumMap(n int, version int64) booking.SeatMap {
	m := booking.SeatMap{EventID: 7, Version: version, At: time.Unix(1_800_000_000, version)}
	for i := range n {
		st := booking.MapSeat{ID: int64(i + 1), Section: fmt.Sprintf("S%02d", i/2000), Row: fmt.Sprintf("R%02d", i/50%40),
			Number: i%50 + 1, PriceCents: 4000 + 1000*(i/10000), X: i % 50 * 12, Y: i / 50 * 12, Status: booking.SeatAvailable}
		switch i % 3 {
		case 1:
			st.Status = booking.SeatHeld
		case 2:
			st.Status = booking.SeatSold
		}
		m.Seats = append(m.Seats, st)
	}
	m.GATiers = []booking.GATier{{ID: 1, Name: "Floor", PriceCents: 5000, Capacity: 10000, Remaining: 42}}
	return m
}

// TestMapBodies: the gzipped body is the plain one; the plain one is the map; a copy is
// encoded once, and a new copy (a new version) again.
func TestMapBodies(t *testing.T) {
	t.Parallel()
	var b mapBodies
	m := stadiumMap(3000, 5)
	body, err := b.of(m)
	if err != nil {
		t.Fatal(err)
	}
	r, err := gzip.NewReader(bytes.NewReader(body.gz))
	if err != nil {
		t.Fatal(err)
	}
	unzipped, err := io.ReadAll(r)
	if err != nil || !bytes.Equal(unzipped, body.plain) {
		t.Fatalf("gunzipped body: %d bytes (%v), want the plain body's %d", len(unzipped), err, len(body.plain))
	}
	var got seatMapJSON
	if err := json.Unmarshal(body.plain, &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Seats) != 3000 || got.Seats[1].Status != booking.SeatHeld || got.Seats[2999].ID != 3000 || got.GATiers[0].Remaining != 42 {
		t.Errorf("decoded map: %d seats, second %+v, last %+v, tiers %+v", len(got.Seats), got.Seats[1], got.Seats[2999], got.GATiers)
	}
	if again, _ := b.of(m); again != body {
		t.Errorf("the same copy asked again: encoded anew, want the body kept")
	}
	m2 := stadiumMap(3000, 6)
	m2.Seats[0].Status = booking.SeatSold
	next, err := b.of(m2)
	if err != nil {
		t.Fatal(err)
	}
	if next == body || !bytes.Contains(next.plain, []byte(`"status":"sold"`)) {
		t.Errorf("a new copy: got the old body back")
	}
	if old, _ := b.of(m); old == next {
		t.Errorf("the old copy asked after the new: got the new body, want the old copy's")
	}
}

// BenchmarkSeatMapBody: a 50,000-seat map's answer as Echo's JSON and gzip middleware
// (level 5) made it, against the body made once at BestSpeed.
func BenchmarkSeatMapBody(b *testing.B) {
	m := stadiumMap(50_000, 1)
	b.Run("echo-gzip5", func(b *testing.B) {
		for b.Loop() {
			out := seatMapJSON{EventID: m.EventID, Seats: make([]mapSeatJSON, len(m.Seats))}
			for i, st := range m.Seats {
				out.Seats[i] = mapSeatJSON{ID: st.ID, Section: st.Section, Row: st.Row, Number: st.Number,
					PriceCents: st.PriceCents, Status: st.Status, X: st.X, Y: st.Y, Accessible: st.Accessible}
			}
			var buf bytes.Buffer
			w, _ := gzip.NewWriterLevel(&buf, 5)
			if err := json.NewEncoder(w).Encode(out); err != nil {
				b.Fatal(err)
			}
			w.Close()
			b.ReportMetric(float64(buf.Len()), "gz-bytes")
		}
	})
	b.Run("body-bestspeed", func(b *testing.B) { // every seat encoded, as the first copy is
		for b.Loop() {
			var e mapEncoder
			body, err := e.encode(m)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(len(body.gz)), "gz-bytes")
		}
	})
	b.Run("body-next-copy", func(b *testing.B) { // a copy after one: the seats' parts kept
		var e mapEncoder
		if _, err := e.encode(m); err != nil {
			b.Fatal(err)
		}
		n := 0
		for b.Loop() {
			n++
			m.Seats[n%len(m.Seats)].Status = booking.SeatSold
			body, err := e.encode(m)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(len(body.gz)), "gz-bytes")
		}
	})
	b.Run("statuses-next-copy", func(b *testing.B) { // the statuses alone, the layout kept
		var e mapEncoder
		if _, err := e.encodeStatuses(m); err != nil {
			b.Fatal(err)
		}
		n := 0
		for b.Loop() {
			n++
			m.Seats[n%len(m.Seats)].Status = booking.SeatSold
			body, err := e.encodeStatuses(m)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(len(body.gz)), "gz-bytes")
		}
	})
}

// TestMapEncoderAsEncodingJSON: the map's body is byte for byte what encoding/json
// writes of seatMapJSON, for a first copy and for the copies after it, whose seats
// changed status, price, name or place, or were added or taken away; with names that
// encoding/json escapes.
func TestMapEncoderAsEncodingJSON(t *testing.T) {
	t.Parallel()
	want := func(m booking.SeatMap) []byte {
		out := seatMapJSON{EventID: m.EventID, Seats: make([]mapSeatJSON, len(m.Seats)), GATiers: make([]gaTierJSON, len(m.GATiers))}
		for i, st := range m.Seats {
			out.Seats[i] = mapSeatJSON{ID: st.ID, Section: st.Section, Row: st.Row, Number: st.Number,
				PriceCents: st.PriceCents, Status: st.Status, X: st.X, Y: st.Y, Accessible: st.Accessible}
		}
		for i, g := range m.GATiers {
			out.GATiers[i] = gaTierJSON{ID: g.ID, Name: g.Name, PriceCents: g.PriceCents, Remaining: g.Remaining}
		}
		var b bytes.Buffer
		if err := json.NewEncoder(&b).Encode(out); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	m := stadiumMap(500, 1)
	m.Seats[3].Section = `Rang "A" <Süd> & status":"`
	m.Seats[4].Row = "\u2028 "
	m.Seats[5].Accessible = true
	m.Seats[6].Status = `odd "status"`
	var e mapEncoder
	check := func(what string, m booking.SeatMap) {
		t.Helper()
		body, err := e.encode(m)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if w := want(m); !bytes.Equal(body.plain, w) {
			at := 0
			for at < min(len(w), len(body.plain)) && w[at] == body.plain[at] {
				at++
			}
			t.Errorf("%s: the body differs from encoding/json's at byte %d of %d:\n got %.80q\nwant %.80q",
				what, at, len(w), body.plain[at:], w[at:])
		}
	}
	check("first copy", m)
	m.Seats[0].Status = booking.SeatSold
	m.Seats[7].PriceCents = 9900
	m.Seats[8].Section = "Balcony"
	m.Seats[9].X, m.Seats[9].Y = 1, 2
	m.Seats[10].Accessible = true
	m.Seats[5].Accessible = false
	m.Seats[11].Rank = 99 // not in the JSON
	m.GATiers[0].Remaining = 41
	check("next copy", m)
	m.Seats = m.Seats[:300]
	check("fewer seats", m)
	m = stadiumMap(600, 3)
	check("more seats, every one changed", m)
	m.Seats, m.GATiers = nil, nil
	check("no seats", m)
}

// TestMapBodiesOneEncodePerCopy: requests that ask at once for a new copy of the map
// get one body, encoded once, not one each.
func TestMapBodiesOneEncodePerCopy(t *testing.T) {
	t.Parallel()
	var b mapBodies
	if _, err := b.of(stadiumMap(3000, 1)); err != nil {
		t.Fatal(err)
	}
	m := stadiumMap(3000, 2)
	const n = 8
	bodies := make([]*mapBody, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			body, err := b.of(m)
			if err != nil {
				t.Error(err)
			}
			bodies[i] = body
		})
	}
	wg.Wait()
	for i, body := range bodies {
		if body != bodies[0] {
			t.Fatalf("request %d got a body of its own: the copy was encoded more than once", i)
		}
	}
}

// TestMapBodiesForgetIdleEvents: an event's body and encoder go once no request has
// asked for its map in mapIdle; an event asked for meanwhile keeps them.
func TestMapBodiesForgetIdleEvents(t *testing.T) {
	t.Parallel()
	now := time.Unix(1_800_000_000, 0)
	b := mapBodies{now: func() time.Time { return now }}
	past, busy := stadiumMap(100, 1), stadiumMap(100, 1)
	past.EventID, busy.EventID = 1, 2
	for _, m := range []booking.SeatMap{past, busy} {
		for _, kind := range []bodyKind{wholeMap, mapStatuses, mapLayout} {
			if _, err := b.body(m, kind); err != nil {
				t.Fatal(err)
			}
		}
	}
	now = now.Add(mapIdle / 2)
	if _, err := b.of(busy); err != nil {
		t.Fatal(err)
	}
	now = now.Add(mapIdle/2 + time.Minute)
	if _, err := b.of(busy); err != nil {
		t.Fatal(err)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for key := range b.m {
		if key.event == 1 {
			t.Errorf("event 1, unasked for %s: its body of kind %d kept", mapIdle+time.Minute, key.kind)
		}
	}
	if b.enc[1] != nil {
		t.Errorf("event 1, unasked for %s: its encoder kept", mapIdle+time.Minute)
	}
	if b.enc[2] == nil || b.m[bodyKey{2, wholeMap}] == nil {
		t.Errorf("event 2, asked for %s ago: its body or encoder dropped", mapIdle/2+time.Minute)
	}
}

// TestMapStatusesAndLayout: the statuses and the layout put together are the whole
// map, seat for seat; the layout's id stays while only statuses change, and its body is
// not made again; it changes when a seat's price changes or a seat goes.
func TestMapStatusesAndLayout(t *testing.T) {
	t.Parallel()
	type statusesJSON struct {
		EventID  int64        `json:"eventId"`
		Layout   string       `json:"layout"`
		Statuses string       `json:"statuses"`
		GATiers  []gaTierJSON `json:"gaTiers"`
	}
	type layoutJSON struct {
		EventID int64         `json:"eventId"`
		Layout  string        `json:"layout"`
		Seats   []mapSeatJSON `json:"seats"`
	}
	status := map[byte]string{'a': booking.SeatAvailable, 'h': booking.SeatHeld, 's': booking.SeatSold}
	var b mapBodies
	// check asks for the three answers of m and returns the layout's id and body.
	check := func(what string, m booking.SeatMap) (string, *mapBody) {
		t.Helper()
		var whole seatMapJSON
		var st statusesJSON
		var lay layoutJSON
		var layBody *mapBody
		for kind, out := range map[bodyKind]any{wholeMap: &whole, mapStatuses: &st, mapLayout: &lay} {
			body, err := b.body(m, kind)
			if err != nil {
				t.Fatalf("%s: kind %d: %v", what, kind, err)
			}
			if err := json.Unmarshal(body.plain, out); err != nil {
				t.Fatalf("%s: kind %d: %v", what, kind, err)
			}
			if kind == mapLayout {
				layBody = body
			}
		}
		if st.Layout == "" || st.Layout != lay.Layout || layBody.layout != lay.Layout || st.EventID != m.EventID || lay.EventID != m.EventID {
			t.Fatalf("%s: statuses of layout %q (event %d), layout %q (event %d, body says %q), want one id, event %d",
				what, st.Layout, st.EventID, lay.Layout, lay.EventID, layBody.layout, m.EventID)
		}
		if len(st.Statuses) != len(whole.Seats) || len(lay.Seats) != len(whole.Seats) {
			t.Fatalf("%s: %d statuses, %d seats in the layout, want the map's %d", what, len(st.Statuses), len(lay.Seats), len(whole.Seats))
		}
		for i, seat := range lay.Seats {
			seat.Status = status[st.Statuses[i]]
			if seat != whole.Seats[i] {
				t.Fatalf("%s: seat %d from layout and statuses %+v, want the map's %+v", what, i, seat, whole.Seats[i])
			}
		}
		if !reflect.DeepEqual(st.GATiers, whole.GATiers) {
			t.Errorf("%s: the statuses' tiers %+v, want the map's %+v", what, st.GATiers, whole.GATiers)
		}
		return lay.Layout, layBody
	}
	m := stadiumMap(600, 1)
	m.Seats[3].Section = `Rang "A" <Süd> & status":"`
	m.Seats[5].Accessible = true
	first, firstBody := check("first copy", m)

	m.Version, m.At = 2, m.At.Add(time.Second)
	m.Seats[0].Status, m.Seats[1].Status = booking.SeatSold, booking.SeatAvailable
	m.GATiers[0].Remaining = 7
	if id, body := check("statuses changed", m); id != first || &body.plain[0] != &firstBody.plain[0] {
		t.Errorf("only statuses changed: layout %q (body made again: %v), want %q kept", id, &body.plain[0] != &firstBody.plain[0], first)
	}

	m.Version, m.At = 3, m.At.Add(time.Second)
	m.Seats[7].PriceCents = 9900
	priced, _ := check("a price changed", m)
	if priced == first {
		t.Errorf("a seat's price changed: the layout's id %q stayed", priced)
	}

	m.Version, m.At = 4, m.At.Add(time.Second)
	m.Seats = m.Seats[:599]
	if fewer, _ := check("a seat gone", m); fewer == priced {
		t.Errorf("a seat gone: the layout's id %q stayed", fewer)
	}
}
