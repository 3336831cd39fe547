package web_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"boxoffice/internal/demo"
	"boxoffice/web"
)

// browser is a person at a browser without JavaScript: cookies, forms posted as forms
// with the token the page carries, redirects seen rather than followed.
type browser struct {
	t    *testing.T
	http *http.Client
	base string
}

func (a *testApp) newBrowser(t *testing.T) *browser {
	jar, _ := cookiejar.New(nil)
	return &browser{t: t, base: a.URL, http: &http.Client{Jar: jar, Timeout: 30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

func (b *browser) do(method, path string, form url.Values, header http.Header) (int, []byte, http.Header) {
	b.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequestWithContext(b.t.Context(), method, b.base+path, body)
	if err != nil {
		b.t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := b.http.Do(req)
	if err != nil {
		b.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		b.t.Fatal(err)
	}
	return resp.StatusCode, raw, resp.Header
}

// page GETs a page that must be there and returns it with the CSRF token its forms carry.
func (b *browser) page(path string) (*goquery.Document, string) {
	b.t.Helper()
	st, body, _ := b.do("GET", path, nil, nil)
	if st != http.StatusOK {
		b.t.Fatalf("GET %s: got status %d, want 200: %s", path, st, truncate(body))
	}
	doc := parseHTML(b.t, body)
	token, _ := doc.Find(`input[name="_csrf"]`).First().Attr("value")
	if token == "" {
		b.t.Fatalf("GET %s: no _csrf field in the page's forms", path)
	}
	return doc, token
}

var htmx = http.Header{"Hx-Request": {"true"}}

// heldSeats counts the event's seats under a live hold.
func heldSeats(t *testing.T, app *testApp, eventID int64) int {
	t.Helper()
	return count(t, app.Pool, `SELECT count(*) FROM seats WHERE event_id = $1 AND held_by IS NOT NULL AND hold_expires_at > now()`, eventID)
}

// TestSeatPage: the seat page is personal (no-store, the CSRF token in its forms), an
// SVG map of every seat with an id for live swaps and an accessible name, wired to the
// live stream.
func TestSeatPage(t *testing.T) {
	t.Parallel()
	app := newTestApp(t)
	b := app.newBrowser(t)
	st, body, h := b.do("GET", "/events/demo-night/seats", nil, nil)
	if st != http.StatusOK {
		t.Fatalf("got status %d, want 200", st)
	}
	if cc := h.Get("Cache-Control"); cc != "private, no-store" {
		t.Errorf("Cache-Control: got %q, want private, no-store", cc)
	}
	doc := parseHTML(t, body)
	token, _ := doc.Find(`body`).Attr("hx-headers")
	if !strings.Contains(token, "X-CSRF-Token") {
		t.Errorf("body hx-headers: got %q, want the CSRF token for htmx", token)
	}
	doc.Find("form[method=post]").Each(func(_ int, f *goquery.Selection) {
		if v, _ := f.Find(`input[name="_csrf"]`).Attr("value"); v == "" || !strings.Contains(token, v) {
			t.Errorf("form %s: _csrf %q, want the page's token", f.AttrOr("action", "?"), v)
		}
	})
	if n := doc.Find(`svg.map g.seat[id^="seat-"]`).Length(); n != demo.DemoSpec(time.Now()).Seats() {
		t.Errorf("seats on the map: got %d, want %d", n, demo.DemoSpec(time.Now()).Seats())
	}
	first := doc.Find(`svg.map g.seat`).First()
	if label, _ := first.Find(`input[type=checkbox][name=seat]`).Attr("aria-label"); label != "Stalls, row A, seat 1, €95, available" {
		t.Errorf("first seat's name: got %q, want %q", label, "Stalls, row A, seat 1, €95, available")
	}
	if doc.Find(`g.seat input[aria-label*="wheelchair space"]`).Length() == 0 || doc.Find(`g.seat use[href="#i-acc"]`).Length() == 0 {
		t.Error("no wheelchair spaces marked on the map")
	}
	if vb, _ := doc.Find("svg.map").Attr("viewBox"); vb == "" {
		t.Error("the map has no viewBox")
	}
	live := doc.Find("[sse-connect]")
	if src, _ := live.Attr("sse-connect"); !strings.HasPrefix(src, "/events/demo-night/stream?v=") || !strings.Contains(live.AttrOr("hx-ext", ""), "sse") {
		t.Errorf("live stream: sse-connect %q, hx-ext %q; want /events/demo-night/stream?v=… and sse", src, live.AttrOr("hx-ext", ""))
	}
	if live.Find(`[sse-swap="seats"][hx-swap="none"]`).Length() != 1 || live.Find(`#seatmap[hx-trigger*="sse:reset"]`).Length() != 1 {
		t.Error("the map does not swap seats from the stream, or does not reload on reset")
	}
	for _, want := range []string{"#hold-panel", "form.best select[name=quantity]", `form.ga input[name=ga_quantity]`, ".legend", `script[src*="/static/js/seats."]`} {
		if doc.Find(want).Length() == 0 {
			t.Errorf("the page lacks %s", want)
		}
	}
	// To htmx, the map alone (what the stream's reset fetches).
	st, frag, _ := b.do("GET", "/events/demo-night/seats", nil, http.Header{"Hx-Request": {"true"}, "Hx-Target": {"seatmap"}})
	if st != http.StatusOK || !bytes.HasPrefix(frag, []byte(`<div id="seatmap"`)) {
		t.Errorf("htmx GET: got status %d, %q; want the map fragment", st, truncate(frag))
	}
}

// TestSeatFormHolds: without JavaScript, ticked seats, best available and GA places are
// held by plain form posts, each answered 303 back to the seat page, which then shows
// the hold with its expiry and the way to checkout.
func TestSeatFormHolds(t *testing.T) {
	t.Parallel()
	app := newTestApp(t)
	b := app.newBrowser(t)
	_, token := b.page("/events/demo-night/seats")
	seats := firstSeats(t, app.Pool, app.EventID, 2)
	form := url.Values{"_csrf": {token}, "seat": {itoa(seats[0]), itoa(seats[1])}}
	st, _, h := b.do("POST", "/events/demo-night/holds", form, nil)
	if st != http.StatusSeeOther || h.Get("Location") != "/events/demo-night/seats" {
		t.Fatalf("POST ticked seats: got %d to %q, want 303 to the seat page", st, h.Get("Location"))
	}
	for _, id := range seats {
		if seatFree(t, app.Pool, app.EventID, id) {
			t.Errorf("seat %d is still free", id)
		}
	}
	doc, _ := b.page("/events/demo-night/seats")
	hold := doc.Find("#hold-panel .hold")
	if hold.Length() != 1 {
		t.Fatalf("holds shown: got %d, want 1", hold.Length())
	}
	href, _ := hold.Find("a.button").Attr("href")
	if !regexp.MustCompile(`^/holds/\d+-\d+/checkout$`).MatchString(href) || !strings.Contains(hold.Text(), "Continue to checkout") {
		t.Errorf("checkout link: got %q, want /holds/<id>/checkout", href)
	}
	exp, _ := hold.Find("[data-expires-at]").Attr("data-expires-at")
	if at, err := time.Parse(time.RFC3339, exp); err != nil || at.Before(time.Now()) {
		t.Errorf("data-expires-at: got %q, want a time to come", exp)
	}
	if !regexp.MustCompile(`\d\d:\d\d CES?T`).MatchString(hold.Find("time").Text()) { // the demo hall's clocks
		t.Errorf("expiry without script: got %q, want a time of day", hold.Find("time").Text())
	}
	for _, id := range seats {
		if doc.Find("#seat-"+itoa(id)).HasClass("mine") != true {
			t.Errorf("seat %d is not marked as the buyer's", id)
		}
	}

	// Best available, three together.
	st, _, _ = b.do("POST", "/events/demo-night/holds", url.Values{"_csrf": {token}, "quantity": {"3"}, "together": {"on"}}, nil)
	if st != http.StatusSeeOther || heldSeats(t, app, app.EventID) != 5 {
		t.Errorf("best available: got status %d and %d seats held, want 303 and 5", st, heldSeats(t, app, app.EventID))
	}
	// General admission.
	tier := count(t, app.Pool, `SELECT id FROM ga_tiers WHERE event_id = $1`, app.EventID)
	st, _, _ = b.do("POST", "/events/demo-night/holds", url.Values{"_csrf": {token}, "ga_tier": {itoa(int64(tier))}, "ga_quantity": {"2"}}, nil)
	if places := count(t, app.Pool, `SELECT coalesce(sum(remaining), 0) FROM ga_stripes WHERE event_id = $1`, app.EventID); st != http.StatusSeeOther || places != 398 {
		t.Errorf("GA: got status %d and %d places left, want 303 and 398", st, places)
	}
	doc, _ = b.page("/events/demo-night/seats")
	// All three joined the one basket: one summary, a line per seat and one for the places.
	if n := doc.Find("#hold-panel .hold").Length(); n != 1 {
		t.Errorf("baskets shown: got %d, want 1", n)
	}
	if n, lines := doc.Find("#hold-panel .basket-summary").Length(), doc.Find("#hold-panel .basket-lines li").Length(); n != 1 || lines != 6 {
		t.Errorf("basket: got %d summaries and %d lines, want 1 and 6", n, lines)
	}
	// A form without its token changes nothing.
	before := saleState(t, app.Pool)
	if st, _, _ := b.do("POST", "/events/demo-night/holds", url.Values{"quantity": {"1"}}, nil); st != http.StatusForbidden {
		t.Errorf("POST without _csrf: got status %d, want 403", st)
	}
	if d := stateDiff(before, saleState(t, app.Pool)); len(d) > 0 {
		t.Errorf("POST without _csrf changed %v", d)
	}
}

// TestSeatHoldHTMX: with htmx a click holds at once; the answer is out-of-band parts:
// the message, the hold panel, the seat now the buyer's.
func TestSeatHoldHTMX(t *testing.T) {
	t.Parallel()
	app := newTestApp(t)
	b := app.newBrowser(t)
	_, token := b.page("/events/demo-night/seats")
	seat := firstSeats(t, app.Pool, app.EventID, 1)[0]
	st, body, h := b.do("POST", "/events/demo-night/holds", url.Values{"_csrf": {token}, "seat": {itoa(seat)}}, htmx)
	if st != http.StatusOK || bytes.Contains(body, []byte("<html")) {
		t.Fatalf("got status %d, %q; want 200 and a fragment", st, truncate(body))
	}
	if h.Get("Cache-Control") != "private, no-store" {
		t.Errorf("Cache-Control: got %q, want private, no-store", h.Get("Cache-Control"))
	}
	doc := parseHTML(t, body)
	if doc.Find(`#hold-panel[hx-swap-oob="true"] .hold`).Length() != 1 {
		t.Error("no hold panel swapped out of band")
	}
	g := doc.Find(`svg > g#seat-` + itoa(seat) + `[hx-swap-oob="true"]`)
	if !g.HasClass("mine") {
		t.Errorf("seat: got %q, want the seat marked as the buyer's, out of band in an <svg>", truncate(body))
	}
	if !strings.HasPrefix(string(body), `<p class="msg"`) || !strings.Contains(doc.Find("p.msg").Text(), "Stalls, row A, seat 1") {
		t.Error("the message does not name the held seat")
	}
	// Unticking a seat asks for nothing: nothing to do.
	if st, _, _ := b.do("POST", "/events/demo-night/holds", url.Values{"_csrf": {token}}, htmx); st != http.StatusNoContent {
		t.Errorf("htmx POST asking nothing: got status %d, want 204", st)
	}
}

// TestSeatJustTaken: a seat someone else took says so by name, and the answer flips it
// on the map (out of band, with htmx; the page re-rendered with 409, without).
func TestSeatJustTaken(t *testing.T) {
	t.Parallel()
	app := newTestApp(t)
	seat := firstSeats(t, app.Pool, app.EventID, 1)[0]
	app.newClient(t).hold(app.EventID, seat)

	b := app.newBrowser(t)
	_, token := b.page("/events/demo-night/seats")
	before := saleState(t, app.Pool)
	form := url.Values{"_csrf": {token}, "seat": {itoa(seat)}}
	st, body, _ := b.do("POST", "/events/demo-night/holds", form, htmx)
	if st != http.StatusConflict {
		t.Fatalf("htmx: got status %d, want 409", st)
	}
	doc := parseHTML(t, body)
	if msg := doc.Find(".msg.error").Text(); !strings.Contains(msg, "Seat A1 (Stalls) was just taken") {
		t.Errorf("message: got %q, want it to name seat A1 (Stalls) as just taken", msg)
	}
	g := doc.Find(`svg > g#seat-` + itoa(seat) + `[hx-swap-oob="true"]`)
	if !g.HasClass("held") || g.Find(`input[name=seat]`).Length() != 0 || !strings.HasSuffix(g.Find("input").AttrOr("aria-label", ""), ", held") {
		t.Errorf("seat: got %q, want it out of band, held, not tickable", truncate(body))
	}

	st, body, _ = b.do("POST", "/events/demo-night/holds", form, nil)
	if st != http.StatusConflict || !bytes.Contains(body, []byte("<html")) {
		t.Fatalf("no JS: got status %d, want the seat page with 409", st)
	}
	doc = parseHTML(t, body)
	if msg := doc.Find("#seat-message .msg.error").Text(); !strings.Contains(msg, "was just taken") {
		t.Errorf("no JS message: got %q", msg)
	}
	if d := stateDiff(before, saleState(t, app.Pool)); len(d) > 0 {
		t.Errorf("a refused hold changed %v", d)
	}

	// Other refusals say what happened, with the API's status.
	other := smallEvent(t, app.Pool, "other-night")
	foreign := firstSeats(t, app.Pool, other, 1)[0]
	st, body, _ = b.do("POST", "/events/demo-night/holds", url.Values{"_csrf": {token}, "seat": {itoa(foreign)}}, nil)
	if st != http.StatusUnprocessableEntity || !bytes.Contains(body, []byte("not seats of this event")) {
		t.Errorf("a seat of another event: got status %d, want 422 and a message", st)
	}
	st, _, _ = b.do("POST", "/events/demo-night/holds", url.Values{"_csrf": {token}, "quantity": {"10"}}, nil)
	if st != http.StatusSeeOther {
		t.Fatalf("ten best seats: got status %d, want 303", st)
	}
	st, body, _ = b.do("POST", "/events/demo-night/holds", url.Values{"_csrf": {token}, "quantity": {"1"}}, htmx)
	if st != http.StatusConflict || !bytes.Contains(body, []byte("at most 10")) {
		t.Errorf("over the limit: got status %d, %q; want 409 and the limit named", st, truncate(body))
	}
}

// TestSeatFormBadInput: a form that makes no sense is a 400 page (or fragment) saying
// why, never a 500, and changes nothing.
func TestSeatFormBadInput(t *testing.T) {
	t.Parallel()
	app := newTestApp(t)
	b := app.newBrowser(t)
	_, token := b.page("/events/demo-night/seats")
	seat := itoa(firstSeats(t, app.Pool, app.EventID, 1)[0])
	eleven := make([]string, 11)
	for i := range eleven {
		eleven[i] = itoa(int64(i + 1))
	}
	before := saleState(t, app.Pool)
	for name, form := range map[string]url.Values{
		"nothing":            {},
		"seat not a number":  {"seat": {"A12"}},
		"seat zero":          {"seat": {"0"}},
		"seat negative":      {"seat": {"-4"}},
		"seat twice":         {"seat": {seat, seat}},
		"too many seats":     {"seat": eleven},
		"seats and quantity": {"seat": {seat}, "quantity": {"2"}},
		"quantity zero":      {"quantity": {"0"}},
		"quantity too big":   {"quantity": {"11"}},
		"quantity words":     {"quantity": {"two"}},
		"huge quantity":      {"quantity": {"99999999999999999999999"}},
		"section NUL":        {"quantity": {"2"}, "section": {"a\x00b"}},
		"GA no quantity":     {"ga_tier": {"1"}},
		"GA tier words":      {"ga_tier": {"standing"}, "ga_quantity": {"1"}},
		"view bad UTF-8":     {"seat": {seat}, "view": {"\xff"}},
	} {
		form.Set("_csrf", token)
		for _, h := range []http.Header{nil, htmx} {
			if name == "nothing" && h != nil {
				continue // htmx's unticking: 204, above
			}
			st, body, _ := b.do("POST", "/events/demo-night/holds", form, h)
			if st != http.StatusBadRequest {
				t.Errorf("%s (htmx %v): got status %d, want 400: %s", name, h != nil, st, truncate(body))
				continue
			}
			if msg := parseHTML(t, body).Find(".msg.error").Text(); msg == "" {
				t.Errorf("%s (htmx %v): no message in %q", name, h != nil, truncate(body))
			}
		}
	}
	if d := stateDiff(before, saleState(t, app.Pool)); len(d) > 0 {
		t.Errorf("bad input changed %v", d)
	}
}

// TestReleaseHold: a hold is released from its own session only; another session gets
// 404, as in the API, and nothing changes.
func TestReleaseHold(t *testing.T) {
	t.Parallel()
	app := newTestApp(t)
	a, stranger := app.newBrowser(t), app.newBrowser(t)
	_, tokenA := a.page("/events/demo-night/seats")
	_, tokenB := stranger.page("/events/demo-night/seats")
	seats := firstSeats(t, app.Pool, app.EventID, 2)
	a.do("POST", "/events/demo-night/holds", url.Values{"_csrf": {tokenA}, "seat": {itoa(seats[0]), itoa(seats[1])}}, nil)
	doc, _ := a.page("/events/demo-night/seats")
	release, _ := doc.Find(`#hold-panel form[action$="/release"]`).Attr("action")
	if !regexp.MustCompile(`^/holds/\d+-\d+/release$`).MatchString(release) {
		t.Fatalf("release form: got action %q", release)
	}

	before := saleState(t, app.Pool)
	for _, path := range []string{release, "/holds/not-a-hold/release", "/holds/1-999999/release"} {
		if st, _, _ := stranger.do("POST", path, url.Values{"_csrf": {tokenB}}, nil); st != http.StatusNotFound {
			t.Errorf("stranger POST %s: got status %d, want 404", path, st)
		}
	}
	if d := stateDiff(before, saleState(t, app.Pool)); len(d) > 0 {
		t.Errorf("a stranger's release changed %v", d)
	}

	st, body, _ := a.do("POST", release, url.Values{"_csrf": {tokenA}}, htmx)
	if st != http.StatusOK {
		t.Fatalf("release: got status %d, want 200", st)
	}
	frag := parseHTML(t, body)
	for _, id := range seats {
		if !seatFree(t, app.Pool, app.EventID, id) {
			t.Errorf("seat %d not free after release", id)
		}
		if g := frag.Find(`g#seat-` + itoa(id) + `[hx-swap-oob="true"]`); !g.HasClass("avail") {
			t.Errorf("seat %d: not swapped back to available in %q", id, truncate(body))
		}
	}
	if frag.Find("#hold-panel .hold").Length() != 0 {
		t.Error("the released hold is still in the panel")
	}
	// Again, without htmx: already released is fine, and back to the seats.
	if st, _, h := a.do("POST", release, url.Values{"_csrf": {tokenA}}, nil); st != http.StatusSeeOther || h.Get("Location") != "/events/demo-night/seats" {
		t.Errorf("release again: got %d to %q, want 303 to the seat page", st, h.Get("Location"))
	}
}

// TestBigVenueSections: a venue over 2,000 seats shows its sections first, each a link
// with its availability, then one section's seats with their accessible names.
func TestBigVenueSections(t *testing.T) {
	t.Parallel()
	app := newTestApp(t)
	if _, err := demo.Create(context.Background(), app.Pool, demo.BigSpec("big", 5000, time.Now())); err != nil {
		t.Fatal(err)
	}
	b := app.newBrowser(t)
	doc, _ := b.page("/events/big/seats")
	if n := doc.Find(`svg.map g.seat`).Length(); n != 0 {
		t.Errorf("overview: %d seats drawn, want none", n)
	}
	var links []string
	doc.Find(`svg.overview a.section`).Each(func(_ int, s *goquery.Selection) {
		links = append(links, s.AttrOr("href", ""))
		if label := s.AttrOr("aria-label", ""); !strings.Contains(label, "2,500 of 2,500 seats left (100%)") {
			t.Errorf("section label: got %q, want its availability", label)
		}
	})
	if want := []string{"/events/big/seats?section=S01", "/events/big/seats?section=S02"}; !slices.Equal(links, want) {
		t.Errorf("section links: got %q, want %q", links, want)
	}
	if doc.Find(`[sse-swap="seats"]`).Length() != 0 || doc.Find(`#seatmap[hx-trigger*="sse:seats"]`).Length() != 1 {
		t.Error("the overview should refresh its counts on seat changes, not swap seats it does not show")
	}

	st, body, _ := b.do("GET", "/events/big/seats?section=S02", nil, nil)
	if st != http.StatusOK {
		t.Fatalf("section S02: got status %d, want 200", st)
	}
	if gz := web.GzipLen(t, body); gz > web.SeatPageBudget {
		t.Errorf("section S02: %d bytes gzipped, want at most %d", gz, web.SeatPageBudget)
	}
	doc = parseHTML(t, body)
	seats := doc.Find(`svg.map g.seat`)
	if seats.Length() != 2500 {
		t.Errorf("section S02: %d seats drawn, want 2500", seats.Length())
	}
	if label := seats.First().Find("input").AttrOr("aria-label", ""); label != "S02, row A, seat 1, €120, available" {
		t.Errorf("first seat: got %q, want %q", label, "S02, row A, seat 1, €120, available")
	}
	// Rows in the order they stand: Z before AA.
	var rows []string
	doc.Find(`svg.map .row-label`).Each(func(_ int, s *goquery.Selection) { rows = append(rows, s.Text()) })
	if len(rows) != 50 || rows[25] != "Z" || rows[26] != "AA" {
		t.Errorf("row order: got %v", rows)
	}
	if doc.Find(`a[href="/events/big/seats"]`).Length() == 0 || doc.Find(`input[name=view][value=S02]`).Length() != 1 {
		t.Error("section view: no way back to the overview, or the form does not return to the section")
	}
	if st, _, _ := b.do("GET", "/events/big/seats?section=S99", nil, nil); st != http.StatusNotFound {
		t.Errorf("unknown section: got status %d, want 404", st)
	}
	// Holding from a section's form comes back to that section.
	_, token := b.page("/events/big/seats?section=S02")
	id, _ := seats.First().Find("input").Attr("value")
	if st, _, h := b.do("POST", "/events/big/holds", url.Values{"_csrf": {token}, "seat": {id}, "view": {"S02"}}, nil); st != http.StatusSeeOther || h.Get("Location") != "/events/big/seats?section=S02" {
		t.Errorf("hold from a section: got %d to %q, want 303 back to the section", st, h.Get("Location"))
	}
}

// TestSeatFragments: what the live stream sends for changed seats: each seat in its
// current state, inside <svg>, marked to replace its element out of band.
func TestSeatFragments(t *testing.T) {
	t.Parallel()
	app := newTestApp(t)
	seats := firstSeats(t, app.Pool, app.EventID, 2)
	app.newClient(t).hold(app.EventID, seats[0])
	s, err := web.NewServer(app.App.WebDeps())
	if err != nil {
		t.Fatal(err)
	}
	var body []byte
	deadline := time.Now().Add(5 * time.Second)
	for {
		if body, err = s.SeatFragments(t.Context(), app.EventID, []int64{seats[0], seats[1], 99999999}, false); err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(body, []byte(`class="seat held"`)) || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond) // the map cache catches up within its age
	}
	if !bytes.HasPrefix(body, []byte("<svg>")) {
		t.Errorf("got %q, want seats wrapped in <svg>", truncate(body))
	}
	doc := parseHTML(t, body)
	if n := doc.Find(`svg > g[hx-swap-oob="true"]`).Length(); n != 2 {
		t.Errorf("got %d seats marked for out-of-band swaps, want 2 (unknown ids left out)", n)
	}
	if !doc.Find("#seat-" + itoa(seats[0])).HasClass("held") {
		t.Errorf("seat %d: want held in %q", seats[0], truncate(body))
	}
	if !doc.Find("#seat-" + itoa(seats[1])).HasClass("avail") {
		t.Errorf("seat %d: want available in %q", seats[1], truncate(body))
	}
	if n := doc.Find(`[id^="ga-left-"]`).Length(); n != 0 {
		t.Errorf("seats alone: got %d GA counts, want none", n)
	}

	// A general-admission change: the places left of each tier come in the same
	// rendering, to replace the page's count out of band.
	body, err = s.SeatFragments(t.Context(), app.EventID, nil, true)
	if err != nil {
		t.Fatal(err)
	}
	ga := parseHTML(t, body).Find(`span[id^="ga-left-"][hx-swap-oob="true"]`)
	if ga.Length() != 1 || !strings.Contains(ga.Text(), "left") {
		t.Errorf("GA change: got %d counts (%q), want the demo's one tier with its places left", ga.Length(), truncate(body))
	}
}
