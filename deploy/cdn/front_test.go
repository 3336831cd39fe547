package cdn_test

import (
	"net/http"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"boxoffice/deploy/cdn"
	"boxoffice/internal/demo"
)

// TestBoardCostsTheOriginOneRequestASecond: the front door's page comes from the
// proxy's cache, and a crowd of waiting pages each reading the
// event's board through the proxy every 100 ms costs the origin about one board
// request a second, however many they are: the waiting costs the origin nothing per
// visitor. The crowd's own requests, counted beside, are the negative control: they
// are many times the origin's.
func TestBoardCostsTheOriginOneRequestASecond(t *testing.T) {
	t.Parallel()
	s := newStack(t, cdn.Config{})
	qid, err := demo.Create(t.Context(), s.App.Pool, demo.StadiumSpec("cdn-front", 100, time.Now().Add(-time.Minute),
		demo.Queue{Slots: 5, Rate: 2, TokenTTL: time.Minute}))
	if err != nil {
		t.Fatal(err)
	}
	board := s.Proxy.URL + "/api/v1/events/" + strconv.FormatInt(qid, 10) + "/queue/board"
	// The front door's page is the same for everyone: the proxy keeps it.
	var door []string
	for range 5 {
		a := fetch(t, nil, "GET", s.Proxy.URL+"/events/cdn-front/door", nil, "")
		if a.Status != http.StatusOK {
			t.Fatalf("door page: got %d", a.Status)
		}
		door = append(door, a.cache())
	}
	if !slices.Contains(door, "HIT") {
		t.Errorf("door page five times: X-Cache-Status %q, want a HIT", door)
	}
	if a := fetch(t, nil, "GET", board, nil, ""); a.Status != http.StatusOK {
		t.Fatalf("board: got %d %s", a.Status, a.Body)
	}
	const pages = 40
	var asked atomic.Int64
	before, start := s.OriginRequests.Load(), time.Now()
	end := start.Add(3 * time.Second)
	var wg sync.WaitGroup
	for range pages {
		wg.Go(func() {
			for time.Now().Before(end) {
				if a := fetch(t, nil, "GET", board, nil, ""); a.Status != http.StatusOK {
					t.Errorf("board through the proxy: got %d", a.Status)
					return
				}
				asked.Add(1)
				time.Sleep(100 * time.Millisecond) // a waiting page's pace
			}
		})
	}
	wg.Wait()
	took, origin := time.Since(start), s.OriginRequests.Load()-before
	if most := int64(took/time.Second) + 2; origin > most {
		t.Errorf("%d pages reading the board for %v: the origin got %d requests, want at most %d (one a second)", pages, took, origin, most)
	}
	if asked.Load() < 10*max(origin, 1) {
		t.Errorf("the pages asked %d times, the origin %d: want the crowd's asks many times the origin's", asked.Load(), origin)
	}
	t.Logf("%d pages asked the board %d times in %v; the origin answered %d", pages, asked.Load(), took, origin)
}
