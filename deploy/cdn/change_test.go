package cdn_test

import (
	"bytes"
	"testing"
	"time"

	"boxoffice/deploy/cdn"
	"boxoffice/internal/catalog"
)

// TestChangedEventNotStaleBeyondSMaxAge: staff rename an event while the proxy holds
// its page. The proxy goes on serving its copy while that is fresh, and the first
// request after s-maxage, however long after, gets the new page: the request that
// finds the copy expired waits for the refresh instead of getting the old copy.
//
// Its negative control runs the same steps against the proxy as it was configured
// before (background update on): that first request gets the old name, STALE, which
// is what this test exists to catch.
func TestChangedEventNotStaleBeyondSMaxAge(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name       string
		background bool
		wantNew    bool
	}{
		{"reference", false, true},
		{"negative control: background update", true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := newStack(t, cdn.Config{AccessLog: true, BackgroundUpdate: tc.background})
			path := "/events/" + s.Slug
			first := fetch(t, nil, "GET", s.Proxy.URL+path, nil, "")
			stored := time.Now()
			if first.cache() != "MISS" || !bytes.Contains(first.Body, []byte("Demo Night")) {
				t.Fatalf("first GET %s: got X-Cache-Status %q; want MISS and the event's name", path, first.cache())
			}
			maxAge := sMaxAge(t, first.Header.Get("Cache-Control"))

			ctx := t.Context()
			c := s.App.Catalog
			ev, err := c.Event(ctx, s.EventID)
			if err != nil {
				t.Fatal(err)
			}
			in := ev.Input()
			in.Name = "Renamed Night"
			if err := c.UpdateEvent(ctx, catalog.Actor{}, s.EventID, in); err != nil {
				t.Fatal(err)
			}
			// The origin shows the new name (within its one-second event cache).
			for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
				if bytes.Contains(fetch(t, nil, "GET", s.Origin+path, nil, "").Body, []byte("Renamed Night")) {
					break
				}
				if time.Now().After(deadline) {
					t.Fatal("origin: the new name not shown within 10 s")
				}
			}
			// While fresh, the proxy's copy is still the old page: it is a cache.
			if a := fetch(t, nil, "GET", s.Proxy.URL+path, nil, ""); time.Since(stored) < maxAge-time.Second &&
				(a.cache() != "HIT" || !bytes.Contains(a.Body, []byte("Demo Night"))) {
				t.Errorf("GET while fresh: got X-Cache-Status %q; want a HIT of the old page", a.cache())
			}

			// Nobody asks until the copy has expired; then one request.
			time.Sleep(time.Until(stored.Add(maxAge + time.Second)))
			a := fetch(t, nil, "GET", s.Proxy.URL+path, nil, "")
			gotNew := bytes.Contains(a.Body, []byte("Renamed Night"))
			t.Logf("first request %v after the copy was stored: X-Cache-Status %s, new name %v",
				time.Since(stored).Round(time.Millisecond), a.cache(), gotNew)
			if gotNew != tc.wantNew {
				t.Errorf("first GET after s-maxage %v: got the new name %v (X-Cache-Status %s), want %v", maxAge, gotNew, a.cache(), tc.wantNew)
			}
		})
	}
}
