package web_test

import (
	"boxoffice/web"
	"encoding/json"
	"net/http"
	"testing"
	"time"
)

// TestSeatMapInParts: the statuses come with the layout's id; the layout asked for by
// that id may be cached for good and revalidates to a 304; together they are the map,
// and a hold shows in the statuses without changing the layout.
func TestSeatMapInParts(t *testing.T) {
	t.Parallel()
	app := newTestApp(t)
	c := app.newClient(t)
	base := "/api/v1/events/" + itoa(app.EventID) + "/seatmap"
	var st struct {
		Layout   string           `json:"layout"`
		Statuses string           `json:"statuses"`
		GATiers  []web.GATierJSON `json:"gaTiers"`
	}
	statuses := func() {
		t.Helper()
		code, raw, h := c.raw("GET", base+"/statuses", nil, nil)
		if code != http.StatusOK || h.Get("Cache-Control") != web.MapCacheControl {
			t.Fatalf("statuses: got %d, Cache-Control %q; want 200, %q", code, h.Get("Cache-Control"), web.MapCacheControl)
		}
		if err := json.Unmarshal(raw, &st); err != nil {
			t.Fatalf("statuses: %v: %.200s", err, raw)
		}
	}
	statuses()
	var whole web.SeatMapJSON
	if code := c.do("GET", base, nil, &whole); code != http.StatusOK {
		t.Fatalf("seat map: got %d", code)
	}
	if st.Layout == "" || len(st.Statuses) != len(whole.Seats) || len(st.GATiers) != len(whole.GATiers) {
		t.Fatalf("statuses: layout %q, %d statuses, %d tiers; want an id, the map's %d seats and %d tiers",
			st.Layout, len(st.Statuses), len(st.GATiers), len(whole.Seats), len(whole.GATiers))
	}

	var lay struct {
		Layout string            `json:"layout"`
		Seats  []web.MapSeatJSON `json:"seats"`
	}
	code, raw, h := c.raw("GET", base+"/layout?v="+st.Layout, nil, nil)
	if code != http.StatusOK || h.Get("Cache-Control") != "public, max-age=31536000, immutable" || h.Get("ETag") != `W/"`+st.Layout+`"` {
		t.Fatalf("layout by its id: got %d, Cache-Control %q, ETag %q; want 200, immutable, the id", code, h.Get("Cache-Control"), h.Get("ETag"))
	}
	if err := json.Unmarshal(raw, &lay); err != nil || lay.Layout != st.Layout || len(lay.Seats) != len(whole.Seats) {
		t.Fatalf("layout: %v, id %q, %d seats; want %q and %d", err, lay.Layout, len(lay.Seats), st.Layout, len(whole.Seats))
	}
	letters := map[string]byte{"available": 'a', "held": 'h', "sold": 's'}
	for i, seat := range whole.Seats {
		part := lay.Seats[i]
		part.Status = seat.Status
		if part != seat || st.Statuses[i] != letters[seat.Status] {
			t.Fatalf("seat %d: layout %+v, status %q; want the map's %+v", i, lay.Seats[i], st.Statuses[i], seat)
		}
	}
	for _, tc := range []struct {
		what, path string
		header     http.Header
		status     int
		cache      string
	}{
		{"revalidated", base + "/layout?v=" + st.Layout, http.Header{"If-None-Match": {`W/"` + st.Layout + `"`}}, http.StatusNotModified, "public, max-age=31536000, immutable"},
		{"without its id", base + "/layout", nil, http.StatusOK, web.MapCacheControl},
		{"by an id it no longer has", base + "/layout?v=0123456789abcdef", nil, http.StatusOK, web.MapCacheControl},
	} {
		code, raw, h := c.raw("GET", tc.path, nil, tc.header)
		if code != tc.status || h.Get("Cache-Control") != tc.cache || (code == http.StatusNotModified && len(raw) != 0) {
			t.Errorf("layout %s: got %d (%d bytes), Cache-Control %q; want %d, %q", tc.what, code, len(raw), h.Get("Cache-Control"), tc.status, tc.cache)
		}
	}

	c.hold(app.EventID, whole.Seats[0].ID, whole.Seats[1].ID)
	was := st.Layout
	waitFor(t, 5*time.Second, "the hold in the statuses", func() bool {
		statuses()
		return st.Statuses[0] == 'h' && st.Statuses[1] == 'h'
	})
	if st.Layout != was {
		t.Errorf("a hold changed the layout's id from %q to %q", was, st.Layout)
	}
}
