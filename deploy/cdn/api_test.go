package cdn_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"testing"
	"time"

	"boxoffice/deploy/cdn"
	"boxoffice/internal/demo"
)

// TestPublicAPIAnswersAreCached: the seat map, its statuses and the waiting room's
// board come from the proxy's cache for the second the origin allows, and the layout
// asked for by its id for good; a hold shows in the statuses once that second is over;
// the rest of the API about an event (its queue place, holds) never touches the cache.
func TestPublicAPIAnswersAreCached(t *testing.T) {
	t.Parallel()
	s := newStack(t, cdn.Config{AccessLog: true})
	ev := s.Proxy.URL + "/api/v1/events/" + strconv.FormatInt(s.EventID, 10)

	// hits asks for a one-second answer ten times in a row: one at least comes from
	// the cache however slow the machine, and none bypasses it.
	hits := func(url string) {
		t.Helper()
		var got []string
		for range 10 {
			a := fetch(t, nil, "GET", url, nil, "")
			if a.Status != http.StatusOK {
				t.Fatalf("GET %s: got %d %s", url, a.Status, a.Body)
			}
			got = append(got, a.cache())
		}
		if !slices.Contains(got, "HIT") || slices.Contains(got, "BYPASS") || slices.Contains(got, "") {
			t.Errorf("GET %s ten times: X-Cache-Status %q; want a HIT at least and no BYPASS", url, got)
		}
	}
	hits(ev + "/seatmap")
	hits(ev + "/seatmap/statuses")

	var st struct{ Layout, Statuses string }
	if a := fetch(t, nil, "GET", ev+"/seatmap/statuses", nil, ""); json.Unmarshal(a.Body, &st) != nil || st.Layout == "" {
		t.Fatalf("statuses: got %d %.200s", a.Status, a.Body)
	}
	layoutURL := ev + "/seatmap/layout?v=" + st.Layout
	first := fetch(t, nil, "GET", layoutURL, nil, "")
	if first.Status != http.StatusOK || first.cache() != "MISS" || first.Header.Get("Cache-Control") != "public, max-age=31536000, immutable" {
		t.Fatalf("layout by id: got %d, X-Cache-Status %q, Cache-Control %q; want 200, MISS, immutable",
			first.Status, first.cache(), first.Header.Get("Cache-Control"))
	}
	time.Sleep(1100 * time.Millisecond) // past any one-second answer's life
	if again := fetch(t, nil, "GET", layoutURL, nil, ""); again.cache() != "HIT" || !bytes.Equal(again.Body, first.Body) {
		t.Errorf("layout by id a second later: X-Cache-Status %q (same body: %v); want HIT, the same layout", again.cache(), bytes.Equal(again.Body, first.Body))
	}
	var lay struct {
		Seats []struct {
			ID int64 `json:"id"`
		} `json:"seats"`
	}
	if err := json.Unmarshal(first.Body, &lay); err != nil || len(lay.Seats) != len(st.Statuses) {
		t.Fatalf("layout: %v, %d seats for %d statuses", err, len(lay.Seats), len(st.Statuses))
	}

	// A hold through the proxy shows in the statuses through the proxy.
	b := newBuyer(t, s.Proxy.URL)
	hold := b.do(t, "POST", ev+"/holds", `{"quantity": 2}`)
	var h struct {
		Seats []struct {
			ID int64 `json:"id"`
		} `json:"seats"`
	}
	if err := json.Unmarshal(hold.Body, &h); hold.Status != http.StatusCreated || err != nil || len(h.Seats) != 2 {
		t.Fatalf("hold: got %d %s", hold.Status, hold.Body)
	}
	var at []int
	for i, seat := range lay.Seats {
		if seat.ID == h.Seats[0].ID || seat.ID == h.Seats[1].ID {
			at = append(at, i)
		}
	}
	if len(at) != 2 {
		t.Fatalf("held seats %+v: %d of them in the layout", h.Seats, len(at))
	}
	shown := false
	for deadline := time.Now().Add(5 * time.Second); !shown && time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		a := fetch(t, nil, "GET", ev+"/seatmap/statuses", nil, "")
		shown = json.Unmarshal(a.Body, &st) == nil && len(st.Statuses) == len(lay.Seats) && st.Statuses[at[0]] == 'h' && st.Statuses[at[1]] == 'h'
	}
	if !shown {
		t.Errorf("the held seats never showed as held in the statuses through the proxy within 5 s")
	}

	// The waiting room's board is public; the waiter's own place is not.
	qid, err := demo.Create(t.Context(), s.App.Pool, demo.StadiumSpec("cdn-board", 100, time.Now().Add(-time.Minute),
		demo.Queue{Slots: 5, Rate: 2, TokenTTL: time.Minute}))
	if err != nil {
		t.Fatal(err)
	}
	q := s.Proxy.URL + "/api/v1/events/" + strconv.FormatInt(qid, 10) + "/queue"
	if a := b.do(t, "POST", q, ""); a.Status != http.StatusOK { // a POST never uses the cache
		t.Errorf("join the queue: got %d %s, want 200", a.Status, a.Body)
	}
	hits(q + "/board")
	for range 2 {
		if a := b.do(t, "GET", q, ""); a.Status != http.StatusOK || a.cache() != "BYPASS" {
			t.Errorf("look at the queue: got %d, X-Cache-Status %q; want 200, BYPASS", a.Status, a.cache())
		}
	}
}
