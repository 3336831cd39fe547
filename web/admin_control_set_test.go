package web_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"boxoffice/internal/staff"
)

// TestControlPanelWithHTMX: the control room's panel changes shoppers at a time and the
// rate in the background: each htmx post answers the panel alone (no page around it)
// saying what it did, with the new setting in its field, stores the setting and audits
// it; a bad value answers 422 with the panel saying why and the value as typed, and
// changes nothing; a post without the CSRF token changes nothing either. The same form
// without htmx goes back to the page. The page shows the turns that lapsed.
func TestControlPanelWithHTMX(t *testing.T) {
	t.Parallel()
	a := newTestApp(t)
	roomOn(t, a, a.EventID, 40, 5, time.Minute)
	c, _ := a.staffClient(t, staff.BoxOffice)
	path := "/admin/events/" + itoa(a.EventID) + "/control"
	room := func() (slots int, rate float64) {
		t.Helper()
		if err := a.Pool.QueryRow(context.Background(), `SELECT queue_slots, queue_rate FROM events WHERE id = $1`, a.EventID).
			Scan(&slots, &rate); err != nil {
			t.Fatal(err)
		}
		return slots, rate
	}

	p := c.page(path, false)
	if p.status != http.StatusOK || p.doc.Find(`#control-panel form[hx-post="`+path+`/slots"][hx-target="#control-panel"]`).Length() != 1 ||
		p.doc.Find(`#control-panel form[hx-post="`+path+`/rate"]`).Length() != 1 {
		t.Fatalf("control room: got %d, want the panel's forms posting with htmx", p.status)
	}
	if lapsed := p.doc.Find(".tile dt").FilterFunction(func(_ int, s *goquery.Selection) bool {
		return strings.HasPrefix(s.Text(), "Turns lapsed")
	}); !strings.Contains(lapsed.Text(), "no seat held in 3 minutes") {
		t.Errorf("the lapsed turns' tile says %q, want the idle window", lapsed.Text())
	}

	r := c.postForm(path+"/slots", url.Values{"_csrf": {c.csrf}, "slots": {"75"}}, true)
	if r.status != http.StatusOK || r.doc.Find("nav.admin-nav").Length() != 0 || r.doc.Find("section#control-panel").Length() != 1 ||
		!strings.Contains(r.doc.Find("#control-panel .notice").Text(), "Shoppers at a time changed") ||
		r.doc.Find("#slots").AttrOr("value", "") != "75" {
		t.Fatalf("slots 75 with htmx: got %d %q, want 200 and the panel alone, saying so, with 75", r.status, r.body)
	}
	r = c.postForm(path+"/rate", url.Values{"_csrf": {c.csrf}, "rate": {"7.5"}}, true)
	if r.status != http.StatusOK || r.doc.Find("#rate").AttrOr("value", "") != "7.5" || r.doc.Find("#slots").AttrOr("value", "") != "75" {
		t.Fatalf("rate 7.5 with htmx: got %d %q, want 200 and the panel with 7.5 and 75", r.status, r.body)
	}
	if slots, rate := room(); slots != 75 || rate != 7.5 {
		t.Errorf("stored: %d shoppers at %g/s, want 75 at 7.5", slots, rate)
	}
	var was, now string
	if err := a.Pool.QueryRow(context.Background(), `SELECT before->>'slots', after->>'slots' FROM audit_log
		WHERE action = 'queue.slots' AND subject = $1`, "event "+itoa(a.EventID)).Scan(&was, &now); err != nil || was != "40" || now != "75" {
		t.Errorf("audit of the slots: before %q after %q (%v), want 40 and 75", was, now, err)
	}

	for _, bad := range []string{"0", "-1", "2.5", "many", "", "100001"} {
		r := c.postForm(path+"/slots", url.Values{"_csrf": {c.csrf}, "slots": {bad}}, true)
		if r.status != http.StatusUnprocessableEntity || !strings.Contains(r.doc.Find(`#control-panel [role="alert"]`).Text(), "whole number from 1 to") ||
			r.doc.Find("#slots").AttrOr("value", "?") != bad || r.doc.Find("#rate").AttrOr("value", "") != "7.5" {
			t.Errorf("slots %q with htmx: got %d %q, want 422 and the panel saying why, with the value typed", bad, r.status, r.body)
		}
	}
	if r := c.postForm(path+"/rate", url.Values{"_csrf": {c.csrf}, "rate": {"NaN"}}, true); r.status != http.StatusUnprocessableEntity ||
		r.doc.Find(`#control-panel [role="alert"]`).Length() != 1 {
		t.Errorf("rate NaN with htmx: got %d, want 422 and the panel saying why", r.status)
	}
	if r := c.postForm(path+"/slots", url.Values{"slots": {"9"}}, true); r.status != http.StatusForbidden {
		t.Errorf("slots without the CSRF token: got %d, want 403", r.status)
	}
	if slots, rate := room(); slots != 75 || rate != 7.5 {
		t.Errorf("after refusals: %d shoppers at %g/s, want 75 at 7.5 as before", slots, rate)
	}

	if r := c.postForm(path+"/slots", url.Values{"_csrf": {c.csrf}, "slots": {"60"}}, false); r.status != http.StatusSeeOther ||
		r.header.Get("Location") != path+"?done=slots" {
		t.Errorf("slots 60 without htmx: got %d to %q, want 303 back to the page", r.status, r.header.Get("Location"))
	}
	if n := count(t, a.Pool, `SELECT count(*) FROM audit_log WHERE action = 'queue.slots'`); n != 2 {
		t.Errorf("audit log has %d queue.slots entries, want 2 (75, then 60)", n)
	}
	if p := c.page(path+"?done=slots", false); !strings.Contains(p.doc.Find("#control-panel .notice").Text(), "Shoppers at a time changed") ||
		p.doc.Find("#slots").AttrOr("value", "") != "60" {
		t.Error("the page after the plain form does not say what changed, or shows other shoppers at a time than 60")
	}
}
