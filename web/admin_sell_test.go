package web_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"boxoffice/internal/booking/bookingtest"
	"boxoffice/internal/live"
	"boxoffice/internal/staff"
)

// sellForm is the staff map's form as the sale button posts it.
func sellForm(c *client, token string, seats ...int64) url.Values {
	f := url.Values{"_csrf": {c.csrf}, "token": {token}, "method": {"cash"}, "name": {"Walk-up"}}
	for _, id := range seats {
		f.Add("seat", itoa(id))
	}
	return f
}

// staffHoldForm is the staff map's form as the hold button posts it.
func staffHoldFormOf(c *client, kind, reason, releaseAt string, seats ...int64) url.Values {
	f := url.Values{"_csrf": {c.csrf}, "kind": {kind}, "reason": {reason}, "release_at": {releaseAt},
		"token": {"some-token-0123456789"}, "method": {"cash"}}
	for _, id := range seats {
		f.Add("seat", itoa(id))
	}
	return f
}

var saleLocation = regexp.MustCompile(`^/admin/events/(\d+)/sales/(\d+)$`)

// TestStaffSellPage: the staff map is the live seat map in the admin frame: its form
// posts to the sale, ticking posts nothing (no htmx on change), the stream is the
// event's, the sale form carries a fresh token, and to htmx it answers with the map.
func TestStaffSellPage(t *testing.T) {
	t.Parallel()
	a := newTestApp(t)
	c, _ := a.staffClient(t, staff.BoxOffice)
	ev := smallEvent(t, a.Pool, "sell-page")
	path := "/admin/events/" + itoa(ev) + "/sell"

	p := c.page(path, false)
	if p.status != http.StatusOK {
		t.Fatalf("GET %s: %d", path, p.status)
	}
	checkPersonal(t, "staff map", p)
	form := p.doc.Find("form#seat-form")
	if act, _ := form.Attr("action"); act != path {
		t.Errorf("map form posts to %q, want %q", act, path)
	}
	if _, ok := form.Attr("hx-post"); ok {
		t.Error("ticking a seat on the staff map posts it (hx-post on the map form)")
	}
	if n := p.doc.Find("form#seat-form input[name=seat]").Length(); n != 10 {
		t.Errorf("tickable seats: %d, want 10", n)
	}
	if sse, _ := p.doc.Find("#live").Attr("sse-connect"); !strings.HasPrefix(sse, "/events/sell-page/stream?v=") {
		t.Errorf("stream %q, want the event's", sse)
	}
	tok, _ := p.doc.Find(`input[name=token][form=seat-form]`).Attr("value")
	again := c.page(path, false)
	tok2, _ := again.doc.Find(`input[name=token][form=seat-form]`).Attr("value")
	if len(tok) < 16 || tok == tok2 {
		t.Errorf("sale form tokens %q and %q: want a fresh one per page", tok, tok2)
	}
	for _, sel := range []string{`button[formaction="` + path + `"]`, `button[formaction="/admin/events/` + itoa(ev) + `/holds"]`,
		`label[for=sale-name]`, `label[for=hold-reason]`, `label[for=hold-release]`, `#seat-message[role=status]`} {
		if p.doc.Find(sel).Length() != 1 {
			t.Errorf("the page has no %s", sel)
		}
	}
	frag := c.page(path, true)
	if frag.status != http.StatusOK || frag.doc.Find("#seatmap").Length() != 1 || frag.doc.Find("nav.admin-nav").Length() != 0 {
		t.Errorf("htmx GET: status %d, want the map alone", frag.status)
	}
	if st := c.page("/admin/events/"+itoa(ev)+"/sell?section=Nowhere", false).status; st != http.StatusNotFound {
		t.Errorf("unknown section: %d, want 404", st)
	}
	home := c.page("/admin", false)
	if home.doc.Find(`a[href="`+path+`"]`).Length() != 1 {
		t.Error("the events list has no link to the staff map")
	}
	door, _ := a.staffClient(t, staff.Door)
	if door.page("/admin", false).doc.Find(`a[href="`+path+`"]`).Length() != 0 {
		t.Error("the door sees the link to the staff map")
	}
}

// TestStaffHoldPages: seats held by staff are refused to online buyers through the
// API and the seat page, and their hold cannot be checked out by one; the staff map
// marks them and lists the hold; releasing it by hand frees the seats at once and
// publishes the change to the live map.
func TestStaffHoldPages(t *testing.T) {
	t.Parallel()
	a := newTestApp(t)
	c, m := a.staffClient(t, staff.BoxOffice)
	ev := smallEvent(t, a.Pool, "staff-holds")
	seats := firstSeats(t, a.Pool, ev, 3)
	base := "/admin/events/" + itoa(ev)

	ans := c.postForm(base+"/holds", staffHoldFormOf(c, "house", `<b>Director</b> & guests`, "", seats[0], seats[1]), false)
	if ans.status != http.StatusSeeOther || !strings.HasPrefix(ans.header.Get("Location"), base+"/sell") {
		t.Fatalf("staff hold: %d to %q, want 303 to the map", ans.status, ans.header.Get("Location"))
	}
	var holdSeq int64
	if err := a.Pool.QueryRow(t.Context(), `SELECT id FROM holds WHERE event_id = $1 AND kind = 'house' AND staff_id = $2`, ev, m.ID).Scan(&holdSeq); err != nil {
		t.Fatalf("the staff hold row: %v", err)
	}

	buyer := a.newClient(t)
	var e errorBody
	if st := buyer.do("POST", "/api/v1/events/"+itoa(ev)+"/holds", map[string]any{"seatIds": []int64{seats[0]}}, &e); st != http.StatusConflict || e.Error != "seat_unavailable" {
		t.Errorf("API hold of a house seat: %d %q, want 409 seat_unavailable", st, e.Error)
	}
	if st := buyer.do("POST", "/api/v1/holds/"+itoa(ev)+"-"+itoa(holdSeq)+"/checkout", map[string]string{"email": "a@example.com"}, &e); st != http.StatusNotFound {
		t.Errorf("API checkout of the staff hold: %d, want 404", st)
	}
	if st := buyer.do("DELETE", "/api/v1/holds/"+itoa(ev)+"-"+itoa(holdSeq), nil, nil); st != http.StatusNotFound {
		t.Errorf("API release of the staff hold: %d, want 404", st)
	}
	page := buyer.postForm("/events/staff-holds/holds", url.Values{"_csrf": {buyer.csrf}, "seat": {itoa(seats[1])}}, false)
	if page.status != http.StatusConflict || !strings.Contains(page.doc.Find("#seat-message").Text(), "just taken") {
		t.Errorf("seat page hold of a house seat: %d %q, want 409 saying it is taken", page.status, page.doc.Find("#seat-message").Text())
	}
	var sm struct {
		Seats []struct {
			ID     int64  `json:"id"`
			Status string `json:"status"`
		} `json:"seats"`
	}
	buyer.do("GET", "/api/v1/events/"+itoa(ev)+"/seatmap", nil, &sm)
	for _, s := range sm.Seats {
		if s.ID == seats[0] && s.Status != "held" {
			t.Errorf("the buyers' map shows the house seat %s, want held", s.Status)
		}
	}

	p := c.page(base+"/sell", false)
	if n := p.doc.Find("#seatmap .seat.staff").Length(); n != 2 {
		t.Errorf("seats marked as staff-held on the staff map: %d, want 2", n)
	}
	if lbl, _ := p.doc.Find("#seat-" + itoa(seats[0]) + " input").Attr("aria-label"); !strings.HasSuffix(lbl, "house hold") {
		t.Errorf("a house seat reads %q, want it named a house hold", lbl)
	}
	list := p.doc.Find("#staff-holds li")
	if list.Length() != 1 || !strings.Contains(list.Text(), "<b>Director</b> & guests") || !strings.Contains(list.Text(), "Until released") {
		t.Errorf("staff holds listed: %q", list.Text())
	}
	if strings.Contains(p.body, "<b>Director</b>") {
		t.Error("the reason's markup is not escaped")
	}

	sub := live.Subscribe(t.Context(), a.Redis, a.Prefix, ev)
	defer sub.Close()
	if _, err := sub.Receive(t.Context()); err != nil {
		t.Fatal(err)
	}
	release, _ := list.Find("form").Attr("action")
	if r := c.postForm(release, url.Values{"_csrf": {c.csrf}}, false); r.status != http.StatusSeeOther {
		t.Fatalf("release: %d", r.status)
	}
	if !seatFree(t, a.Pool, ev, seats[0]) || !seatFree(t, a.Pool, ev, seats[1]) {
		t.Error("seats not free after the release")
	}
	var heard []int64
	deadline := time.After(5 * time.Second)
	for len(heard) < 2 {
		select {
		case msg := <-sub.Channel():
			var ch live.Change
			if err := json.Unmarshal([]byte(msg.Payload), &ch); err != nil {
				t.Fatal(err)
			}
			heard = append(heard, ch.SeatIDs...)
		case <-deadline:
			t.Fatalf("live map heard %v after the release, want %v", heard, seats[:2])
		}
	}
	slices.Sort(heard)
	if !slices.Equal(heard, seats[:2]) {
		t.Errorf("live map heard %v, want %v", heard, seats[:2])
	}
	buyer.hold(ev, seats[0])
	if n := count(t, a.Pool, `SELECT count(*) FROM audit_log WHERE staff_id = $1 AND action IN ('hold.create', 'hold.release')`, m.ID); n != 2 {
		t.Errorf("audit entries: %d, want 2", n)
	}
	// Released again, or a buyer's hold named as a staff hold: nothing to release.
	if r := c.postForm(release, url.Values{"_csrf": {c.csrf}}, false); r.status != http.StatusSeeOther {
		t.Errorf("second release: %d, want 303", r.status)
	}
	if r := c.postForm(base+"/holds/"+itoa(holdSeq+1)+"/release", url.Values{"_csrf": {c.csrf}}, false); r.status != http.StatusNotFound {
		t.Errorf("release of a buyer's hold: %d, want 404", r.status)
	}
	if seatFree(t, a.Pool, ev, seats[0]) {
		t.Error("the buyer's seat was freed by a staff release")
	}
}

// TestStaffHoldReleasedOnTimePage: a staff hold with a release time is refused to
// buyers until then and is free to them from then on, by the database clock, whether
// or not the tidy-up has run; the staff map no longer lists it.
func TestStaffHoldReleasedOnTimePage(t *testing.T) {
	t.Parallel()
	a := newTestApp(t)
	c, _ := a.staffClient(t, staff.Admin)
	ev := smallEvent(t, a.Pool, "on-time")
	seats := firstSeats(t, a.Pool, ev, 2)
	base := "/admin/events/" + itoa(ev)
	at := time.Now().UTC().Add(2 * time.Hour).Truncate(time.Minute)
	if r := c.postForm(base+"/holds", staffHoldFormOf(c, "press", "Reviewers", at.Format("2006-01-02T15:04"), seats...), false); r.status != http.StatusSeeOther {
		t.Fatalf("staff hold: %d %s", r.status, r.doc.Find("#seat-message").Text())
	}
	if n := count(t, a.Pool, `SELECT count(*) FROM holds WHERE event_id = $1 AND kind = 'press' AND expires_at = $2`, ev, at); n != 1 {
		t.Errorf("press holds released at %v: %d, want 1", at, n)
	}
	if li := c.page(base+"/sell", false).doc.Find("#staff-holds li").Text(); !strings.Contains(li, at.Format("15:04")) {
		t.Errorf("the hold's release time is not shown: %q", li)
	}
	buyer := a.newClient(t)
	if st := buyer.do("POST", "/api/v1/events/"+itoa(ev)+"/holds", map[string]any{"seatIds": seats[:1]}, nil); st != http.StatusConflict {
		t.Errorf("API hold before the release time: %d, want 409", st)
	}
	// The release time comes: moved into the past, as the clock would.
	for _, q := range []string{
		`UPDATE holds SET expires_at = now() - interval '1 second' WHERE event_id = $1 AND kind = 'press'`,
		`UPDATE seats SET hold_expires_at = now() - interval '1 second' WHERE event_id = $1 AND held_by IS NOT NULL`,
	} {
		if _, err := a.Pool.Exec(t.Context(), q, ev); err != nil {
			t.Fatal(err)
		}
	}
	buyer.hold(ev, seats[0]) // no tidy-up has run: lazy expiry
	if n := c.page(base+"/sell", false).doc.Find("#staff-holds li").Length(); n != 0 {
		t.Errorf("staff holds listed after their release time: %d, want 0", n)
	}
}

// TestStaffSale: the sale form sells the ticked seats at once and sends the browser to
// their printable tickets, QR codes and all; the same form again sells nothing more and
// shows the same tickets; the money and seat invariants hold.
func TestStaffSale(t *testing.T) {
	t.Parallel()
	a := newTestApp(t)
	c, m := a.staffClient(t, staff.BoxOffice)
	ev := smallEvent(t, a.Pool, "sale")
	seats := firstSeats(t, a.Pool, ev, 3)
	base := "/admin/events/" + itoa(ev)

	f := sellForm(c, "sale-token-0123456789", seats[0], seats[1])
	f.Set("method", "card_present")
	f.Set("email", "walkup@example.com")
	f.Set("name", "<i>Walk-up</i>")
	ans := c.postForm(base+"/sell", f, false)
	loc := saleLocation.FindStringSubmatch(ans.header.Get("Location"))
	if ans.status != http.StatusSeeOther || loc == nil || loc[1] != itoa(ev) {
		t.Fatalf("sale: %d to %q, want 303 to the tickets; %s", ans.status, ans.header.Get("Location"), ans.doc.Find("#seat-message").Text())
	}
	if again := c.postForm(base+"/sell", f, false); again.header.Get("Location") != ans.header.Get("Location") {
		t.Errorf("the same form again: %d to %q, want %q", again.status, again.header.Get("Location"), ans.header.Get("Location"))
	}
	if n := count(t, a.Pool, `SELECT count(*) FROM orders WHERE event_id = $1 AND status = 'confirmed'`, ev); n != 1 {
		t.Errorf("confirmed orders: %d, want 1", n)
	}
	// A sale like any other for /metrics: one order, two tickets, the replay nothing.
	reg := a.App.Metrics.Registry
	if o, tk := metricValue(t, reg, "boxoffice_orders_confirmed_total", nil), metricValue(t, reg, "boxoffice_tickets_issued_total", nil); o != 1 || tk != 2 {
		t.Errorf("counted %g orders and %g tickets, want 1 and 2", o, tk)
	}
	other := sellForm(c, "sale-token-0123456789", seats[2])
	if r := c.postForm(base+"/sell", other, false); r.status != http.StatusConflict || seatFree(t, a.Pool, ev, seats[2]) == false {
		t.Errorf("the used form for other seats: %d, want 409 and nothing sold", r.status)
	}

	p := c.page(ans.header.Get("Location"), false)
	if p.status != http.StatusOK {
		t.Fatalf("tickets page: %d", p.status)
	}
	if n := p.doc.Find("ol.tickets .ticket svg.qr path").Length(); n != 2 {
		t.Errorf("tickets with QR codes: %d, want 2", n)
	}
	if p.doc.Find(`link[rel=stylesheet][media=print]`).Length() != 1 || p.doc.Find("button[data-print]").Length() != 1 {
		t.Error("the tickets page has no print stylesheet or print button")
	}
	if strings.Contains(p.body, "<i>Walk-up</i>") || !strings.Contains(p.body, "&lt;i&gt;Walk-up&lt;/i&gt;") {
		t.Error("the buyer's name is not escaped on the tickets page")
	}
	for _, want := range []string{"Paid by card at the box office", "<i>Walk-up</i> walkup@example.com", "Sold by " + m.Name} {
		if !strings.Contains(p.doc.Find(".order-summary").Text(), want) {
			t.Errorf("the sale's summary does not say %q", want)
		}
	}
	if n := count(t, a.Pool, `SELECT count(*) FROM box_office_sales WHERE event_id = $1 AND staff_id = $2 AND method = 'card_present'`, ev, m.ID); n != 1 {
		t.Errorf("box-office sales recorded: %d, want 1", n)
	}
	if st := c.page(base+"/sales/999999", false).status; st != http.StatusNotFound {
		t.Errorf("tickets of no order: %d, want 404", st)
	}
	if st := c.page("/admin/events/"+itoa(a.EventID)+"/sales/"+loc[2], false).status; st != http.StatusNotFound {
		t.Errorf("tickets of the order under another event: %d, want 404", st)
	}
	bookingtest.CheckMoney(t, a.Pool, ev)
}

// TestStaffSaleRefused: a seat an online buyer holds is not sold, and the page says
// which; bad input is a 400 that says what; nothing changes in either case.
func TestStaffSaleRefused(t *testing.T) {
	t.Parallel()
	a := newTestApp(t)
	c, _ := a.staffClient(t, staff.BoxOffice)
	ev := smallEvent(t, a.Pool, "refused")
	seats := firstSeats(t, a.Pool, ev, 3)
	base := "/admin/events/" + itoa(ev)
	a.newClient(t).hold(ev, seats[0])
	before := saleState(t, a.Pool)

	r := c.postForm(base+"/sell", sellForm(c, "refused-token-000001", seats[1], seats[0]), false)
	if r.status != http.StatusConflict || !strings.Contains(r.doc.Find("#seat-message").Text(), "Not available: A1") {
		t.Errorf("sale of a held seat: %d %q, want 409 naming it", r.status, r.doc.Find("#seat-message").Text())
	}
	if v, _ := r.doc.Find("#sale-name").Attr("value"); v != "Walk-up" {
		t.Errorf("the name typed comes back as %q", v)
	}
	long := strings.Repeat("x", 201)
	for name, tc := range map[string]struct {
		path string
		form url.Values
	}{
		"sale, no seat":          {"/sell", sellForm(c, "refused-token-000002")},
		"sale, bad seat":         {"/sell", with(sellForm(c, "refused-token-000003"), "seat", "x1")},
		"sale, seat twice":       {"/sell", sellForm(c, "refused-token-000004", seats[1], seats[1])},
		"sale, no method":        {"/sell", with(sellForm(c, "refused-token-000005", seats[1]), "method", "")},
		"sale, other method":     {"/sell", with(sellForm(c, "refused-token-000006", seats[1]), "method", "cheque")},
		"sale, bad email":        {"/sell", with(sellForm(c, "refused-token-000007", seats[1]), "email", "not an email")},
		"sale, long name":        {"/sell", with(sellForm(c, "refused-token-000008", seats[1]), "name", long)},
		"sale, no token":         {"/sell", with(sellForm(c, "", seats[1]), "token", "")},
		"hold, no seat":          {"/holds", staffHoldFormOf(c, "house", "r", "")},
		"hold, no reason":        {"/holds", staffHoldFormOf(c, "house", " ", "", seats[1])},
		"hold, other kind":       {"/holds", staffHoldFormOf(c, "buyer", "r", "", seats[1])},
		"hold, bad release":      {"/holds", staffHoldFormOf(c, "house", "r", "tomorrow", seats[1])},
		"hold, release passed":   {"/holds", staffHoldFormOf(c, "house", "r", "2020-01-01T10:00", seats[1])},
		"hold, long reason":      {"/holds", staffHoldFormOf(c, "house", strings.Repeat("r", 501), "", seats[1])},
		"hold, unknown seat":     {"/holds", staffHoldFormOf(c, "house", "r", "", 999999999)},
		"hold, NUL in reason":    {"/holds", staffHoldFormOf(c, "house", "a\x00b", "", seats[1])},
		"hold, a held seat":      {"/holds", staffHoldFormOf(c, "kill", "r", "", seats[0])},
		"sale, unknown seat":     {"/sell", sellForm(c, "refused-token-000009", 999999999)},
		"sale, seat of other ev": {"/sell", sellForm(c, "refused-token-000010", firstSeats(t, a.Pool, a.EventID, 1)[0])},
	} {
		r := c.postForm(base+tc.path, tc.form, false)
		msg := strings.TrimSpace(r.doc.Find("#seat-message").Text())
		if r.status < 400 || r.status >= 500 || msg == "" {
			t.Errorf("%s: %d %q, want a 4xx that says why", name, r.status, msg)
		}
	}
	if d := stateDiff(before, saleState(t, a.Pool)); len(d) > 0 {
		t.Errorf("refused requests changed the database: %v", d)
	}
	if n := count(t, a.Pool, `SELECT count(*) FROM box_office_sales`) + count(t, a.Pool, `SELECT count(*) FROM payments`); n != 0 {
		t.Errorf("sales or payments after refusals: %d, want 0", n)
	}
}

// with is f with one field set.
func with(f url.Values, field, value string) url.Values {
	f.Set(field, value)
	return f
}

// TestStaffSaleByNumber: without ticking, the sale form sells the best seats or
// standing places by number; asking for both at once, or for more than there are, is
// refused and sells nothing.
func TestStaffSaleByNumber(t *testing.T) {
	t.Parallel()
	a := newTestApp(t)
	c, _ := a.staffClient(t, staff.BoxOffice)
	ev := smallEvent(t, a.Pool, "by-number")
	base := "/admin/events/" + itoa(ev)
	p := c.page(base+"/sell", false)
	tier, _ := p.doc.Find("#sale-ga-tier option").Attr("value")
	if tier == "" || p.doc.Find("label[for=sale-qty]").Length() != 1 || p.doc.Find("label[for=sale-ga-qty]").Length() != 1 {
		t.Fatalf("the sale form has no fields to sell by number")
	}

	best := with(sellForm(c, "by-number-token-00001"), "quantity", "3")
	if r := c.postForm(base+"/sell", best, false); r.status != http.StatusSeeOther || !saleLocation.MatchString(r.header.Get("Location")) {
		t.Fatalf("best 3: %d %s", r.status, r.doc.Find("#seat-message").Text())
	}
	standing := with(with(sellForm(c, "by-number-token-00002"), "ga_tier", tier), "ga_quantity", "4")
	r := c.postForm(base+"/sell", standing, false)
	if r.status != http.StatusSeeOther {
		t.Fatalf("4 standing: %d %s", r.status, r.doc.Find("#seat-message").Text())
	}
	if n := c.page(r.header.Get("Location"), false).doc.Find("ol.tickets .ticket svg.qr").Length(); n != 4 {
		t.Errorf("standing tickets printed: %d, want 4", n)
	}
	if n := count(t, a.Pool, `SELECT count(*) FROM tickets WHERE event_id = $1`, ev); n != 7 {
		t.Errorf("tickets: %d, want 7", n)
	}
	before := saleState(t, a.Pool)
	for name, f := range map[string]url.Values{
		"seats and a number": with(sellForm(c, "by-number-token-00003", firstSeats(t, a.Pool, ev, 10)[9]), "quantity", "1"),
		"too many standing":  with(with(sellForm(c, "by-number-token-00004"), "ga_tier", tier), "ga_quantity", "7"),
		"no such tier":       with(with(sellForm(c, "by-number-token-00005"), "ga_tier", "x"), "ga_quantity", "1"),
		"zero seats":         with(sellForm(c, "by-number-token-00006"), "quantity", "0"),
	} {
		r := c.postForm(base+"/sell", f, false)
		if msg := strings.TrimSpace(r.doc.Find("#seat-message").Text()); r.status < 400 || r.status >= 500 || msg == "" {
			t.Errorf("%s: %d %q, want a 4xx that says why", name, r.status, msg)
		}
	}
	if d := stateDiff(before, saleState(t, a.Pool)); len(d) > 0 {
		t.Errorf("refused sales changed the database: %v", d)
	}
	bookingtest.CheckMoney(t, a.Pool, ev)
}
