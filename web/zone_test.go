package web_test

import (
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"boxoffice/internal/booking"
	"boxoffice/internal/staff"
	"boxoffice/internal/zone"
)

// lastSunday is the last Sunday of the month: the day Europe's clocks change.
func lastSunday(year int, month time.Month) time.Time {
	d := time.Date(year, month+1, 1, 12, 0, 0, 0, time.UTC).AddDate(0, 0, -1)
	return d.AddDate(0, 0, -int(d.Weekday()))
}

// berlinNights are next year's nights Berlin's clocks change: at 02:30 on the first
// it is no time at all, on the second twice.
func berlinNights() (gap, twice time.Time) {
	y := time.Now().Year() + 1
	return lastSunday(y, time.March), lastSunday(y, time.October)
}

// berlinVenue saves a venue in Europe/Berlin through the venue form.
func berlinVenue(t *testing.T, c *client) int64 {
	t.Helper()
	form := venueForm(c.csrf, "Spree Hall")
	form.Set("time_zone", "Europe/Berlin")
	form.Set("action", "save")
	saved := c.postForm("/admin/venues", form, false)
	loc := saved.header.Get("Location")
	if saved.status != http.StatusSeeOther {
		t.Fatalf("save venue: got %d, want 303: %s", saved.status, saved.doc.Find(".error").Text())
	}
	id, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimPrefix(loc, "/admin/venues/"), "?saved=1"), 10, 64)
	if err != nil {
		t.Fatalf("save venue: sent to %q", loc)
	}
	if p := c.page("/admin/venues/"+itoa(id), false); p.doc.Find("#venue-zone").AttrOr("value", "") != "Europe/Berlin" ||
		p.doc.Find("#venue-zones option[value='Europe/Berlin']").Length() != 1 {
		t.Errorf("venue page: got zone %q, want Europe/Berlin, offered in the list", p.doc.Find("#venue-zone").AttrOr("value", ""))
	}
	return id
}

// TestVenueZoneRefused: a venue whose zone is no IANA zone is a 400 that says so, and
// nothing is stored; an existing venue keeps its zone.
func TestVenueZoneRefused(t *testing.T) {
	t.Parallel()
	a := newTestApp(t)
	c, _ := a.staffClient(t, staff.Admin)
	id := berlinVenue(t, c)
	before := catalogState(t, a.Pool)
	for _, bad := range []string{"Europe/Nowhere", "Local", "../../etc/passwd", "CET; DROP TABLE venues"} {
		for _, path := range []string{"/admin/venues", "/admin/venues/" + itoa(id)} {
			form := venueForm(c.csrf, "Spree Hall")
			form.Set("time_zone", bad)
			form.Set("action", "save")
			p := c.postForm(path, form, false)
			if msg := p.doc.Find("#venue-error").Text(); p.status != http.StatusBadRequest || !strings.Contains(msg, "is not a time zone") {
				t.Errorf("POST %s zone %q: got %d %q, want 400 saying it is not a time zone", path, bad, p.status, msg)
			}
		}
	}
	if d := stateDiff(before, catalogState(t, a.Pool)); len(d) > 0 {
		t.Errorf("refused zones changed the catalog: %v", d)
	}
}

// TestBerlinEventAcrossDST: an event at a Berlin venue typed in Berlin time on the
// nights the clocks change. The skipped 02:30 is refused with a 400 and nothing is
// stored; the doubled 02:30 is stored as its first pass (CEST, 00:30 UTC) and shown
// back as typed; the event page, the confirmation email and the CSV export say Berlin
// time with the zone named.
func TestBerlinEventAcrossDST(t *testing.T) {
	t.Parallel()
	a := newMoneyApp(t)
	admin, _ := a.staffClient(t, staff.Admin)
	venue := berlinVenue(t, admin)
	berlin, _ := zone.Load("Europe/Berlin")
	gap, twice := berlinNights()

	if p := admin.page("/admin/events/new?venue="+itoa(venue), false); !strings.Contains(p.doc.Find("legend").Text(), "Times in Europe/Berlin") {
		t.Errorf("new event form: got legends %q, want Times in Europe/Berlin", p.doc.Find("legend").Text())
	}
	form := eventFormValues(admin.csrf, venue, "night-of-the-clocks")
	form.Set("onsale_at", zone.Form(time.Now().Add(-time.Hour), berlin))
	form.Set("starts_at", twice.Format("2006-01-02")+"T02:30")
	form.Set("sales_close_at", gap.Format("2006-01-02")+"T02:30")
	before := catalogState(t, a.Pool)
	refused := admin.postForm("/admin/events", form, false)
	want := gap.Format("2006-01-02") + " 02:30 does not exist in Europe/Berlin"
	if msg := refused.doc.Find("#event-error").Text(); refused.status != http.StatusBadRequest || !strings.Contains(msg, want) {
		t.Errorf("close in the skipped hour: got %d %q, want 400 saying %q", refused.status, msg, want)
	}
	if refused.doc.Find("#event-close").AttrOr("value", "") != form.Get("sales_close_at") {
		t.Errorf("refused form: got close %q, want it as typed", refused.doc.Find("#event-close").AttrOr("value", ""))
	}
	if d := stateDiff(before, catalogState(t, a.Pool)); len(d) > 0 {
		t.Errorf("a refused time changed the catalog: %v", d)
	}

	form.Set("sales_close_at", "")
	form.Set("published", "on")
	created := admin.postForm("/admin/events", form, false)
	if created.status != http.StatusSeeOther {
		t.Fatalf("create: got %d, want 303: %s", created.status, created.doc.Find(".error").Text())
	}
	edit := strings.TrimSuffix(created.header.Get("Location"), "?saved=1")
	id, _ := strconv.ParseInt(strings.TrimPrefix(edit, "/admin/events/"), 10, 64)
	firstPass := time.Date(twice.Year(), twice.Month(), twice.Day(), 0, 30, 0, 0, time.UTC)
	stored := func() time.Time {
		var at time.Time
		if err := a.Pool.QueryRow(t.Context(), `SELECT starts_at FROM events WHERE id = $1`, id).Scan(&at); err != nil {
			t.Fatal(err)
		}
		return at
	}
	if at := stored(); !at.Equal(firstPass) {
		t.Errorf("stored start: got %v, want %v (the first 02:30, CEST)", at.UTC(), firstPass)
	}
	shown := twice.Format("Mon 2 Jan 2006") + ", 02:30 CEST"
	p := admin.page(edit, false)
	if got := p.doc.Find("#event-starts").AttrOr("value", ""); got != form.Get("starts_at") || p.doc.Find("#event-starts-text").Text() != shown {
		t.Errorf("edit form: got %q (%q), want %q as typed (%q)", got, p.doc.Find("#event-starts-text").Text(), form.Get("starts_at"), shown)
	}
	// Saved again unchanged, the form stores the same moment: what it shows reads back.
	again := url.Values{}
	p.doc.Find("form.event-editor input").Each(func(_ int, s *goquery.Selection) {
		if n, ok := s.Attr("name"); ok && (s.AttrOr("type", "") != "checkbox" || s.Is("[checked]")) {
			again.Set(n, s.AttrOr("value", ""))
		}
	})
	if st := admin.postForm(edit, again, false).status; st != http.StatusSeeOther || !stored().Equal(firstPass) {
		t.Errorf("saved unchanged: got %d and %v, want 303 and %v", st, stored().UTC(), firstPass)
	}

	buyer := a.newClient(t)
	page := buyer.page("/events/night-of-the-clocks", false)
	if txt := page.doc.Find("main").Text(); !strings.Contains(txt, shown) || strings.Contains(txt, "UTC") {
		t.Errorf("event page: want %q and no UTC in %q", shown, strings.Join(strings.Fields(txt), " "))
	}

	seats := firstSeats(t, a.Pool, id, 1)
	co := a.checkout(buyer, buyer.hold(id, seats...).HoldID)
	buyer.pay(co.OrderID, "")
	waitOrder(t, buyer, co.OrderID, booking.StatusConfirmed)
	msg := a.mailWith(t, "Your tickets for")
	if !strings.Contains(msg.Text, shown) || !strings.Contains(msg.HTML, shown) {
		t.Errorf("confirmation email: want %q in text and HTML; text:\n%s", shown, msg.Text)
	}

	_, rows := admin.csvOf("/admin/events/" + itoa(id) + "/orders.csv")
	var createdAt time.Time
	if err := a.Pool.QueryRow(t.Context(), `SELECT created_at FROM orders WHERE id = $1`, co.OrderID).Scan(&createdAt); err != nil {
		t.Fatal(err)
	}
	col := slices.Index(rows[0], "created_at")
	if len(rows) != 2 || col < 0 || rows[1][col] != zone.ISO(createdAt, berlin) || rows[1][len(rows[1])-1] != "Europe/Berlin" ||
		rows[0][len(rows[0])-1] != "time_zone" {
		t.Errorf("orders CSV: got %q, want created_at %s and the zone named", rows, zone.ISO(createdAt, berlin))
	}
	if at, err := time.Parse(time.RFC3339, rows[1][col]); err != nil || !at.Equal(createdAt.Truncate(time.Second)) {
		t.Errorf("orders CSV created_at %q: got %v, %v; want the stored moment", rows[1][col], at, err)
	}

	// The box office sees the order, and the audit log its creation, on Berlin's
	// clocks too: every venue of this program is in Berlin.
	if txt := admin.page("/admin/orders/"+itoa(co.OrderID), false).doc.Find("main").Text(); !strings.Contains(txt, zone.Short(createdAt, berlin)) {
		t.Errorf("order admin: want %q in %q", zone.Short(createdAt, berlin), strings.Join(strings.Fields(txt), " "))
	}
	var auditAt time.Time
	if err := a.Pool.QueryRow(t.Context(), `SELECT at FROM audit_log WHERE action = 'event.create' AND subject = $1`,
		"event:"+itoa(id)).Scan(&auditAt); err != nil {
		t.Fatal(err)
	}
	if txt := admin.page("/admin/audit", false).doc.Find("main").Text(); !strings.Contains(txt, zone.Stamp(auditAt, berlin)) {
		t.Errorf("audit log: want %q in %q", zone.Stamp(auditAt, berlin), strings.Join(strings.Fields(txt), " ")[:300])
	}
}
