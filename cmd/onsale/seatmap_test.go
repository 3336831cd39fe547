package main

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// mapAnswer is a seat map answer as the server writes it, with the fields the
// simulator does not read.
func mapAnswer(t testing.TB, statuses []string, ids []int64, section string) []byte {
	t.Helper()
	type seat struct {
		ID         int64  `json:"id"`
		Section    string `json:"section"`
		Row        string `json:"row"`
		Number     int    `json:"number"`
		PriceCents int    `json:"priceCents"`
		Status     string `json:"status"`
		X          int    `json:"x"`
		Y          int    `json:"y"`
		Accessible bool   `json:"accessible,omitempty"`
	}
	type tier struct {
		ID         int64  `json:"id"`
		Name       string `json:"name"`
		PriceCents int    `json:"priceCents"`
		Remaining  int    `json:"remaining"`
	}
	var m struct {
		EventID int64  `json:"eventId"`
		Seats   []seat `json:"seats"`
		GATiers []tier `json:"gaTiers"`
	}
	m.EventID = 7
	for i, id := range ids {
		m.Seats = append(m.Seats, seat{ID: id, Section: section, Row: string(rune('A' + i/3)), Number: 1 + i%3,
			PriceCents: 5000, Status: statuses[i], X: i, Y: i, Accessible: i == 0})
	}
	m.GATiers = []tier{{ID: 99, Name: "Standing", PriceCents: 3000, Remaining: len(statuses)}}
	raw, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// decodeWhole is the seat map read the plain way, to compare with.
func decodeWhole(t *testing.T, raw []byte) seatMapJSON {
	t.Helper()
	var m seatMapJSON
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestSeatMapStatuses: after a whole read, the board reads a map of the same seats
// from their ids and statuses alone, and gets what a whole decode gets; a map of
// other seats (or in another order) is read whole again. A section name holding the
// status key's characters does not fool the scan.
func TestSeatMapStatuses(t *testing.T) {
	t.Parallel()
	ids := []int64{11, 12, 13, 21, 22, 23}
	section := `Tier "status":"sold" \ 2`
	var sb seatBoard
	first := mapAnswer(t, []string{"available", "available", "held", "sold", "available", "available"}, ids, section)
	if seats, _, err := sb.parse(first); err != nil || !reflect.DeepEqual(seats, decodeWhole(t, first).Seats) {
		t.Fatalf("first read: got %v, %v; want the whole decode", seats, err)
	}
	for _, tc := range []struct {
		name     string
		ids      []int64
		statuses []string
		fast     bool
	}{
		{"same seats, new statuses", ids, []string{"sold", "held", "available", "sold", "blocked", "held"}, true},
		{"a seat gone", ids[:5], []string{"sold", "held", "available", "sold", "held"}, false},
		{"another order", []int64{12, 11, 13, 21, 22, 23}, []string{"sold", "held", "available", "sold", "held", "held"}, false},
		{"back to the first seats", ids, []string{"held", "held", "held", "held", "held", "sold"}, false},
		{"and again", ids, []string{"sold", "sold", "sold", "sold", "sold", "sold"}, true},
	} {
		raw := mapAnswer(t, tc.statuses, tc.ids, section)
		sb.mu.Lock()
		_, fast := statusesOf(raw, sb.layout)
		sb.mu.Unlock()
		if fast != tc.fast {
			t.Errorf("%s: read from the statuses alone %v, want %v", tc.name, fast, tc.fast)
		}
		seats, tiers, err := sb.parse(raw)
		want := decodeWhole(t, raw)
		if err != nil || !reflect.DeepEqual(seats, want.Seats) || !reflect.DeepEqual(tiers, want.GATiers) {
			t.Errorf("%s: got %v %v, %v; want %v %v", tc.name, seats, tiers, err, want.Seats, want.GATiers)
		}
	}
	// Keys in another order, as another encoder might write them.
	other := fmt.Sprintf(`{"gaTiers":[{"remaining":4,"id":99}],"seats":[%s]}`, strings.Join([]string{
		`{"status":"held","number":1,"row":"A","section":"x","id":11}`, `{"status":"sold","id":12}`,
		`{"id":13,"status":"available"}`, `{"id":21,"status":"available"}`, `{"id":22,"status":"held"}`,
		`{"status":"available","id":23}`}, ","))
	seats, tiers, err := sb.parse([]byte(other))
	got := make([]string, len(seats))
	for i, st := range seats {
		got[i] = fmt.Sprint(st.ID, st.Status)
	}
	if want := "[11held 12sold 13available 21available 22held 23available]"; err != nil || fmt.Sprint(got) != want || len(tiers) != 1 || tiers[0].Remaining != 4 {
		t.Errorf("keys in another order: got %v %v, %v; want %s and one tier with 4 left", got, tiers, err, want)
	}
}

// BenchmarkSeatMapParse: a 50,000-seat map read whole, and from its statuses.
func BenchmarkSeatMapParse(b *testing.B) {
	ids := make([]int64, 50_000)
	statuses := make([]string, len(ids))
	for i := range ids {
		ids[i], statuses[i] = int64(i+1), []string{"available", "held", "sold"}[i%3]
	}
	raw := mapAnswer(b, statuses, ids, "S01")
	b.Run("whole", func(b *testing.B) {
		for b.Loop() {
			var sb seatBoard
			if _, _, err := sb.parse(raw); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("statuses", func(b *testing.B) {
		var sb seatBoard
		if _, _, err := sb.parse(raw); err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			if _, _, err := sb.parse(raw); err != nil {
				b.Fatal(err)
			}
		}
	})
}
