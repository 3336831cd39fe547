package web_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"boxoffice/internal/demo"
)

// anon fetches a page as a stranger with no cookies at all, as a CDN does.
func anon(t *testing.T, method, url string, header http.Header) (int, []byte, http.Header) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, body, resp.Header
}

func parseHTML(t *testing.T, body []byte) *goquery.Document {
	t.Helper()
	doc, err := goquery.NewDocumentFromReader(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("not HTML: %v", err)
	}
	return doc
}

// TestPublicPagesCacheable: the home and event pages are for everyone and for the CDN:
// public Cache-Control with s-maxage (and no stale-while-revalidate), an ETag that answers
// 304, HEAD answered, no cookie and nothing personal.
func TestPublicPagesCacheable(t *testing.T) {
	t.Parallel()
	app := newTestApp(t)
	for _, tc := range []struct {
		path, sMaxAge string
		vary          bool
		want          []string
	}{
		{"/", "s-maxage=60", false, []string{`href="/events/demo-night"`, "Demo Night: The Boxoffice Orchestra", "Boxoffice Hall"}},
		{"/events/demo-night", "s-maxage=10", true, []string{
			"Boxoffice Hall", "Stalls", "Circle", "Balcony", "€95", "€25", "Standing", "800 of 800 left",
			`href="/events/demo-night/seats"`, "Choose seats",
		}},
	} {
		t.Run(tc.path, func(t *testing.T) {
			st, body, h := anon(t, "GET", app.URL+tc.path, nil)
			if st != http.StatusOK {
				t.Fatalf("GET: got status %d, want 200", st)
			}
			cc := h.Get("Cache-Control")
			for _, want := range []string{"public", tc.sMaxAge} {
				if !strings.Contains(cc, want) {
					t.Errorf("Cache-Control: got %q, want it to contain %q", cc, want)
				}
			}
			// Events change: a copy must not outlive s-maxage (docs/CDN.md).
			if strings.Contains(cc, "stale-while-revalidate") {
				t.Errorf("Cache-Control: got %q, want no stale-while-revalidate on a page that shows events", cc)
			}
			if sc := h.Values("Set-Cookie"); len(sc) > 0 {
				t.Errorf("Set-Cookie: got %q, want none on a public page", sc)
			}
			if got := strings.Contains(strings.Join(h.Values("Vary"), ","), "HX-Request"); got != tc.vary {
				t.Errorf("Vary: got %q, want HX-Request in it: %v", h.Values("Vary"), tc.vary)
			}
			for _, personal := range []string{"_csrf", "hx-headers", "X-CSRF-Token", "Your basket"} {
				if bytes.Contains(body, []byte(personal)) {
					t.Errorf("body contains %q: a public page must carry nothing personal", personal)
				}
			}
			for _, want := range tc.want {
				if !bytes.Contains(body, []byte(want)) {
					t.Errorf("body lacks %q", want)
				}
			}
			etag := h.Get("ETag")
			if etag == "" {
				t.Fatal("no ETag")
			}
			st, body304, h304 := anon(t, "GET", app.URL+tc.path, http.Header{"If-None-Match": {etag}})
			if st != http.StatusNotModified || len(body304) != 0 {
				t.Errorf("If-None-Match: got status %d and %d bytes, want 304 and none", st, len(body304))
			}
			if h304.Get("ETag") != etag || !strings.Contains(h304.Get("Cache-Control"), "public") {
				t.Errorf("304 headers: got ETag %q, Cache-Control %q; want %q and public", h304.Get("ETag"), h304.Get("Cache-Control"), etag)
			}
			st, headBody, hh := anon(t, "HEAD", app.URL+tc.path, nil)
			if st != http.StatusOK || len(headBody) != 0 {
				t.Errorf("HEAD: got status %d and %d bytes, want 200 and none", st, len(headBody))
			}
			if hh.Get("ETag") != etag || hh.Get("Cache-Control") != cc || len(hh.Values("Set-Cookie")) > 0 {
				t.Errorf("HEAD headers: got ETag %q, Cache-Control %q, Set-Cookie %q; want those of the GET and no cookie",
					hh.Get("ETag"), hh.Get("Cache-Control"), hh.Values("Set-Cookie"))
			}
		})
	}
}

// TestEventPageFragment: to htmx the event page answers with its availability alone;
// Vary keeps the two apart in caches.
func TestEventPageFragment(t *testing.T) {
	t.Parallel()
	app := newTestApp(t)
	_, _, page := anon(t, "GET", app.URL+"/events/demo-night", nil)
	st, body, h := anon(t, "GET", app.URL+"/events/demo-night", http.Header{"Hx-Request": {"true"}})
	if st != http.StatusOK {
		t.Fatalf("got status %d, want 200", st)
	}
	if bytes.Contains(body, []byte("<html")) || !bytes.HasPrefix(body, []byte(`<section id="availability"`)) {
		t.Errorf("got %q, want the availability section alone", truncate(body))
	}
	if !strings.Contains(strings.Join(h.Values("Vary"), ","), "HX-Request") {
		t.Errorf("Vary: got %q, want HX-Request", h.Values("Vary"))
	}
	if h.Get("ETag") == page.Get("ETag") || !strings.Contains(h.Get("Cache-Control"), "s-maxage=") {
		t.Errorf("fragment: ETag %q (page %q), Cache-Control %q; want its own ETag and a public Cache-Control",
			h.Get("ETag"), page.Get("ETag"), h.Get("Cache-Control"))
	}
}

// TestEventNameEscaped: an event name with markup is text on every page that shows it.
func TestEventNameEscaped(t *testing.T) {
	t.Parallel()
	app := newTestApp(t)
	name := `<script>alert("x")</script> & <b>Friends</b>`
	spec := demo.DemoSpec(time.Now())
	spec.Slug, spec.Name = "markup-night", name
	if _, err := demo.Create(context.Background(), app.Pool, spec); err != nil {
		t.Fatal(err)
	}
	c := app.newClient(t)
	for _, path := range []string{"/", "/events/markup-night", "/events/markup-night/seats"} {
		st, body, _ := c.raw("GET", path, nil, nil)
		if st != http.StatusOK {
			t.Fatalf("GET %s: got status %d, want 200", path, st)
		}
		if bytes.Contains(body, []byte("<script>alert")) || bytes.Contains(body, []byte("<b>Friends")) {
			t.Errorf("GET %s: the event name's markup is in the page unescaped", path)
		}
		if !bytes.Contains(body, []byte("&lt;script&gt;alert(")) {
			t.Errorf("GET %s: the escaped event name is missing", path)
		}
		found := false
		parseHTML(t, body).Find("h1, h2 a").Each(func(_ int, s *goquery.Selection) {
			found = found || s.Text() == name
		})
		if !found {
			t.Errorf("GET %s: no heading reads %q", path, name)
		}
	}
}

// TestEventNotFound: an unknown event is a 404 page, never cached as public.
func TestEventNotFound(t *testing.T) {
	t.Parallel()
	app := newTestApp(t)
	for _, path := range []string{"/events/no-such-event", "/events/no-such-event/seats"} {
		st, body, h := anon(t, "GET", app.URL+path, nil)
		if st != http.StatusNotFound || !bytes.Contains(body, []byte("<html")) {
			t.Errorf("GET %s: got status %d, want a 404 page", path, st)
		}
		if strings.Contains(h.Get("Cache-Control"), "public") {
			t.Errorf("GET %s: Cache-Control %q, want nothing public", path, h.Get("Cache-Control"))
		}
	}
}

// TestHomeListsUpcoming: the home page lists events still to come, not those past.
func TestHomeListsUpcoming(t *testing.T) {
	t.Parallel()
	app := newTestApp(t)
	past := demo.EventSpec{
		Slug: "last-year", Name: "Last Year's Gala", Venue: "Old Hall", City: "Berlin",
		StartsAt: time.Now().Add(-24 * time.Hour), OnsaleAt: time.Now().Add(-48 * time.Hour),
		Sections: []demo.Section{{Name: "Stalls", Rows: 1, SeatsPerRow: 2, Prices: []demo.RowPrice{{FromRow: 0, Tier: "A", PriceCents: 1000}}}},
	}
	if _, err := demo.Create(context.Background(), app.Pool, past); err != nil {
		t.Fatal(err)
	}
	_, body, _ := anon(t, "GET", app.URL+"/", nil)
	doc := parseHTML(t, body)
	if n := doc.Find(`.events a[href="/events/demo-night"]`).Length(); n != 1 {
		t.Errorf("the demo event: %d links, want 1", n)
	}
	if bytes.Contains(body, []byte("Last Year")) {
		t.Error("a past event is listed")
	}
}
