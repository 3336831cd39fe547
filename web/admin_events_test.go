package web_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"boxoffice/internal/catalog"
	"boxoffice/internal/staff"
	"boxoffice/web"
)

// smallVenue stores a venue of 20 seats and 50 standing places through the catalog.
func smallVenue(t *testing.T, a *testApp) int64 {
	t.Helper()
	l, err := catalog.LayoutForm{
		Sections: []catalog.SectionForm{{Name: "Floor", Rows: "2", Seats: "10", Prices: "A-B Floor 40"}},
		GA:       []catalog.GAForm{{Name: "Standing", Capacity: "50", Price: "20"}},
	}.Parse()
	if err != nil {
		t.Fatal(err)
	}
	id, err := a.App.Catalog.CreateVenue(t.Context(), catalog.Actor{}, catalog.VenueInput{Name: "Small Room", Layout: l})
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func eventFormValues(csrf string, venue int64, slug string) url.Values {
	now := time.Now().UTC()
	return url.Values{
		"_csrf": {csrf}, "venue": {strconv.FormatInt(venue, 10)}, "name": {"Quiet <i>Night</i>"}, "slug": {slug},
		"starts_at":      {now.Add(72 * time.Hour).Format(web.FormTime)},
		"onsale_at":      {now.Add(-time.Hour).Format(web.FormTime)},
		"sales_close_at": {""}, "hold_minutes": {"7"},
		"queue_slots": {"100"}, "queue_rate": {"5"}, "queue_minutes": {"10"}, "queue_idle_minutes": {"4"},
	}
}

// TestEventCreatePublish: an admin creates an event at a venue, unpublished; it has
// its own seats and standing places, is absent from the public list, page and API,
// and refuses holds; published, it appears and sells; unpublished again, it goes.
func TestEventCreatePublish(t *testing.T) {
	t.Parallel()
	a := newTestApp(t)
	venue := smallVenue(t, a)
	c, _ := a.staffClient(t, staff.Admin)

	if p := c.page("/admin/events/new?venue="+strconv.FormatInt(venue, 10), false); p.status != http.StatusOK ||
		p.doc.Find("#event-venue option[selected]").AttrOr("value", "") != strconv.FormatInt(venue, 10) {
		t.Fatalf("GET /admin/events/new: got %d, want 200 with the venue chosen", p.status)
	}
	created := c.postForm("/admin/events", eventFormValues(c.csrf, venue, "quiet-night"), false)
	loc := created.header.Get("Location")
	if created.status != http.StatusSeeOther || !strings.HasPrefix(loc, "/admin/events/") {
		t.Fatalf("create: got %d to %q; want 303 to the event: %s", created.status, loc, created.doc.Find(".error").Text())
	}
	id, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimPrefix(loc, "/admin/events/"), "?saved=1"), 10, 64)
	var seats, places, hold int
	if err := a.Pool.QueryRow(t.Context(), `SELECT (SELECT count(*) FROM seats WHERE event_id = $1),
		(SELECT sum(remaining) FROM ga_stripes WHERE event_id = $1), (SELECT hold_minutes FROM events WHERE id = $1)`, id).
		Scan(&seats, &places, &hold); err != nil {
		t.Fatal(err)
	}
	if seats != 20 || places != 50 || hold != 7 {
		t.Errorf("inventory: got %d seats, %d places, hold %d min; want 20, 50, 7", seats, places, hold)
	}
	edit := c.page(loc, false)
	if edit.status != http.StatusOK || edit.doc.Find("h1 i").Length() != 0 || !strings.Contains(edit.doc.Find("h1").Text(), "<i>Night</i>") {
		t.Fatalf("edit page: got %d, heading %q; want 200 and the name escaped", edit.status, edit.doc.Find("h1").Text())
	}

	buyer := a.newClient(t)
	visible := func() (home, page, api bool) {
		home = strings.Contains(buyer.page("/", false).body, "/events/quiet-night")
		page = buyer.page("/events/quiet-night", false).status == http.StatusOK
		var list []struct{ Slug string }
		if st := buyer.do("GET", "/api/v1/events", nil, &list); st != http.StatusOK {
			t.Fatalf("GET /api/v1/events: %d", st)
		}
		for _, e := range list {
			api = api || e.Slug == "quiet-night"
		}
		return home, page, api
	}
	holdStatus := func() (int, string) {
		var seat int64
		if err := a.Pool.QueryRow(t.Context(), `SELECT min(id) FROM seats WHERE event_id = $1`, id).Scan(&seat); err != nil {
			t.Fatal(err)
		}
		st, body, _ := buyer.raw("POST", "/api/v1/events/"+strconv.FormatInt(id, 10)+"/holds", map[string]any{"seatIds": []int64{seat}}, nil)
		var e struct{ Error string }
		_ = json.Unmarshal(body, &e)
		return st, e.Error
	}
	gaStatus := func() int {
		var tier int64
		if err := a.Pool.QueryRow(t.Context(), `SELECT id FROM ga_tiers WHERE event_id = $1`, id).Scan(&tier); err != nil {
			t.Fatal(err)
		}
		st, _, _ := buyer.raw("POST", "/api/v1/events/"+strconv.FormatInt(id, 10)+"/holds", map[string]any{"gaTierId": tier, "quantity": 1}, nil)
		return st
	}

	// Created unpublished (the box was not ticked).
	if home, page, api := visible(); home || page || api {
		t.Errorf("unpublished: on home %v, page served %v, in the API %v; want none", home, page, api)
	}
	if st, code := holdStatus(); st != http.StatusConflict || code != "sales_closed" {
		t.Errorf("unpublished, seat hold: got %d %q, want 409 sales_closed", st, code)
	}
	if st := gaStatus(); st != http.StatusConflict {
		t.Errorf("unpublished, standing hold: got %d, want 409", st)
	}

	if p := c.postForm(loc[:strings.Index(loc, "?")]+"/publish", url.Values{"_csrf": {c.csrf}, "published": {"true"}}, false); p.status != http.StatusSeeOther {
		t.Fatalf("publish: got %d, want 303", p.status)
	}
	// The public pages read events through a one-second cache.
	waitFor(t, 5*time.Second, "the published event on the public pages", func() bool {
		home, page, api := visible()
		return home && page && api
	})
	if st, _ := holdStatus(); st != http.StatusCreated {
		t.Errorf("published, seat hold: got %d, want 201", st)
	}
	// The event's own hold minutes decide the hold's length.
	var minutes float64
	if err := a.Pool.QueryRow(t.Context(), `SELECT extract(epoch FROM max(expires_at - created_at)) / 60 FROM holds WHERE event_id = $1`, id).Scan(&minutes); err != nil || minutes < 6.9 || minutes > 7.1 {
		t.Errorf("hold length: got %.2f minutes (err %v), want the event's 7", minutes, err)
	}

	if p := c.postForm(loc[:strings.Index(loc, "?")]+"/publish", url.Values{"_csrf": {c.csrf}, "published": {"false"}}, false); p.status != http.StatusSeeOther {
		t.Fatalf("unpublish: got %d, want 303", p.status)
	}
	waitFor(t, 5*time.Second, "the unpublished event gone from the public pages", func() bool {
		home, page, api := visible()
		return !home && !page && !api
	})
	if st := gaStatus(); st != http.StatusConflict {
		t.Errorf("unpublished again, standing hold: got %d, want 409", st)
	}
	var audits int
	if err := a.Pool.QueryRow(t.Context(), `SELECT count(*) FROM audit_log WHERE subject = $1 AND action IN ('event.create', 'event.publish', 'event.unpublish')`,
		"event:"+strconv.FormatInt(id, 10)).Scan(&audits); err != nil || audits != 3 {
		t.Errorf("audit: got %d entries (err %v), want create, publish, unpublish", audits, err)
	}
	// The admin list still shows it, marked.
	if home := c.page("/admin", false); !strings.Contains(home.doc.Find("table").Text(), "not published") {
		t.Error("admin home: want the unpublished event listed as not published")
	}
}

// TestEventFormBadInput: settings out of range are a 400 with the form and its
// message, and change nothing; so are an unknown venue and a taken address.
func TestEventFormBadInput(t *testing.T) {
	t.Parallel()
	a := newTestApp(t)
	venue := smallVenue(t, a)
	c, _ := a.staffClient(t, staff.Admin)
	now := time.Now().UTC()
	before := catalogState(t, a.Pool)
	for _, tc := range []struct {
		name, key, value, want string
	}{
		{"no name", "name", "", "give the event a name"},
		{"hold 0", "hold_minutes", "0", "between 1 and 60"},
		{"hold 61", "hold_minutes", "61", "between 1 and 60"},
		{"hold text", "hold_minutes", "ten", "whole number"},
		{"close before onsale", "sales_close_at", now.Add(-2 * time.Hour).Format(web.FormTime), "close after they open"},
		{"close after start", "sales_close_at", now.Add(100 * time.Hour).Format(web.FormTime), "when the event starts or before"},
		{"bad date", "starts_at", "tomorrow", "not a date and time"},
		{"no slots", "queue_slots", "0", "at least 1"},
		{"rate zero", "queue_rate", "0", "above 0"},
		{"rate NaN", "queue_rate", "NaN", "above 0"},
		{"rate huge", "queue_rate", "1e9", "at most"},
		{"admission too long", "queue_minutes", "500", "between 1 and 120"},
		{"idle window 0", "queue_idle_minutes", "0", "lapses after between 1 and 120"},
		{"unknown venue", "venue", "999999", "choose a venue"},
		{"no venue", "venue", "x", "choose a venue"},
		{"taken address", "slug", "demo-night", "another event has the address"},
		{"bad address", "slug", "Demo Night", "lower-case letters"},
	} {
		form := eventFormValues(c.csrf, venue, "new-night")
		form.Set(tc.key, tc.value)
		p := c.postForm("/admin/events", form, false)
		if msg := p.doc.Find(".error[role=alert]").Text(); p.status != http.StatusBadRequest || !strings.Contains(msg, tc.want) {
			t.Errorf("%s: got %d, message %q; want 400 saying %q", tc.name, p.status, msg, tc.want)
		}
	}
	// Editing an existing event with bad settings, and ids that name nothing.
	form := eventFormValues(c.csrf, venue, "")
	form.Set("hold_minutes", "99")
	if p := c.postForm("/admin/events/"+strconv.FormatInt(a.EventID, 10), form, false); p.status != http.StatusBadRequest {
		t.Errorf("edit with hold 99: got %d, want 400", p.status)
	}
	for _, path := range []string{"/admin/events/999999", "/admin/events/0", "/admin/events/abc"} {
		if p := c.postForm(path, eventFormValues(c.csrf, venue, ""), false); p.status/100 != 4 {
			t.Errorf("POST %s: got %d, want a 4xx", path, p.status)
		}
	}
	if p := c.postForm("/admin/events/"+strconv.FormatInt(a.EventID, 10)+"/publish", url.Values{"_csrf": {c.csrf}, "published": {"maybe"}}, false); p.status != http.StatusBadRequest {
		t.Errorf("publish=maybe: got %d, want 400", p.status)
	}
	if d := stateDiff(before, catalogState(t, a.Pool)); len(d) > 0 {
		t.Errorf("bad input changed the database: %v", d)
	}

	// A good edit changes the settings and records before and after. The demo event
	// has no hold time of its own (HOLD_TTL): its form shows the field empty, and an
	// edit that leaves it empty keeps it so.
	if v, ok := c.page("/admin/events/"+strconv.FormatInt(a.EventID, 10), false).doc.Find("#event-hold").Attr("value"); ok && v != "" {
		t.Errorf("the form shows hold minutes %q for an event that has none, want empty", v)
	}
	form = eventFormValues(c.csrf, venue, "")
	form.Set("name", "Demo Night, renamed")
	form.Set("hold_minutes", "")
	if p := c.postForm("/admin/events/"+strconv.FormatInt(a.EventID, 10), form, false); p.status != http.StatusSeeOther {
		t.Fatalf("edit: got %d, want 303: %s", p.status, p.doc.Find(".error").Text())
	}
	if n := count(t, a.Pool, `SELECT count(*) FROM events WHERE id = $1 AND hold_minutes IS NULL`, a.EventID); n != 1 {
		t.Error("an edit with no hold minutes gave the event a hold time of its own")
	}
	var name string
	if err := a.Pool.QueryRow(t.Context(), `SELECT after->>'name' FROM audit_log WHERE action = 'event.update' AND before->>'name' <> after->>'name'`).Scan(&name); err != nil || name != "Demo Night, renamed" {
		t.Errorf("audit of the edit: got %q (err %v)", name, err)
	}
}

// TestEventFormIdleWindow: the event form shows how long a turn with no seat held
// lasts (the schema's 3 minutes for the demo event); an edit changes it, audited
// before and after, and a form without the field keeps the default.
func TestEventFormIdleWindow(t *testing.T) {
	t.Parallel()
	a := newTestApp(t)
	venue := smallVenue(t, a)
	c, _ := a.staffClient(t, staff.Admin)
	path := "/admin/events/" + strconv.FormatInt(a.EventID, 10)
	if v := c.page(path, false).doc.Find("#event-idle").AttrOr("value", ""); v != "3" {
		t.Errorf("the form shows an idle window of %q minutes, want the default 3", v)
	}
	idle := func() int { return count(t, a.Pool, `SELECT queue_idle_seconds FROM events WHERE id = $1`, a.EventID) }
	if p := c.postForm(path, eventFormValues(c.csrf, venue, ""), false); p.status != http.StatusSeeOther || idle() != 240 {
		t.Fatalf("edit with 4 minutes: got %d, idle window %d s; want 303 and 240: %s", p.status, idle(), p.doc.Find(".error").Text())
	}
	var was, now string
	if err := a.Pool.QueryRow(t.Context(), `SELECT before->>'queueIdleSeconds', after->>'queueIdleSeconds' FROM audit_log
		WHERE action = 'event.update' AND subject = $1`, "event:"+strconv.FormatInt(a.EventID, 10)).Scan(&was, &now); err != nil ||
		was != "180" || now != "240" {
		t.Errorf("audit of the idle window: before %q after %q (err %v), want 180 and 240", was, now, err)
	}
	form := eventFormValues(c.csrf, venue, "")
	form.Del("queue_idle_minutes")
	if p := c.postForm(path, form, false); p.status != http.StatusSeeOther || idle() != 180 {
		t.Errorf("edit without the field: got %d, idle window %d s; want 303 and the default 180", p.status, idle())
	}
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, within time.Duration, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(within); !cond(); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, within)
		}
	}
}
