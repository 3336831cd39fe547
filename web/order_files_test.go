package web_test

import (
	"boxoffice/web"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"boxoffice/internal/mail/mailtest"
	"boxoffice/internal/ticketpdf/pdftest"
	"boxoffice/internal/zone"
)

// An order's files through HTTP: the tickets as PDF (one page and one QR image a
// ticket, each page with its own code) and the calendar entry (RFC 5545), for the
// order's session and through its access link; an order without valid tickets has
// neither.

// TestOrderPDF: the PDF of an order of three tickets (two seats, one standing place),
// by the buying session and by link, is three pages with three QR images, each page
// with its ticket's code and place; private and not indexed. An unpaid order has none.
func TestOrderPDF(t *testing.T) {
	t.Parallel()
	a, catcher := newMailApp(t)
	to := mailtest.Address(t)
	c, standing := a.newClient(t), a.newClient(t)
	h := c.hold(a.EventID, firstSeats(t, a.Pool, a.EventID, 2)...)
	tier := count(t, a.Pool, `SELECT id FROM ga_tiers WHERE event_id = $1`, a.EventID)
	var ga web.HoldJSON
	if st := standing.do("POST", "/api/v1/events/"+itoa(a.EventID)+"/holds", map[string]any{"gaTierId": tier, "quantity": 1}, &ga); st != http.StatusCreated {
		t.Fatalf("standing place: got %d, want 201", st)
	}
	// The ticket says when on the venue's clocks, as every page does.
	var startsAt time.Time
	var tz string
	if err := a.Pool.QueryRow(t.Context(), `SELECT e.starts_at, v.time_zone FROM events e JOIN venues v ON v.id = e.venue_id WHERE e.id = $1`, a.EventID).Scan(&startsAt, &tz); err != nil {
		t.Fatal(err)
	}
	loc, err := time.LoadLocation(tz)
	if err != nil {
		t.Fatal(err)
	}
	when := zone.When(startsAt, loc)
	var orders []web.OrderJSON
	for buyer, id := range map[*client]string{c: h.HoldID, standing: ga.HoldID} {
		var co web.CheckoutAnswerJSON
		if st := buyer.do("POST", "/api/v1/holds/"+id+"/checkout", map[string]string{"email": to}, &co); st != http.StatusCreated {
			t.Fatalf("checkout: got %d, want 201", st)
		}
		buyer.pay(co.OrderID, "")
		orders = append(orders, waitOrder(t, buyer, co.OrderID, "confirmed"))
	}
	if len(orders[0].Tickets) != 2 {
		orders[0], orders[1] = orders[1], orders[0] // the seats' order first
	}
	o := orders[0]
	link := linkInMail(t, catcher, to, 2, "Your tickets for")
	if !strings.HasPrefix(link, web.OrderURL(o.OrderID)+"?") { // the newest confirmation is the standing place's
		o = orders[1]
	}
	pdfByLink := strings.Replace(link, "?t=", web.PDFSuffix+"?t=", 1)

	for name, tc := range map[string]struct {
		c    *client
		path string
	}{
		"session": {c, web.OrderURL(orders[0].OrderID) + web.PDFSuffix},
		"link":    {a.stranger(t), pdfByLink},
	} {
		want := orders[0]
		if name == "link" {
			want = o
		}
		st, raw, hdr := tc.c.raw("GET", tc.path, nil, nil)
		if st != http.StatusOK || hdr.Get("Content-Type") != "application/pdf" {
			t.Fatalf("%s: got %d %q, want 200 application/pdf", name, st, hdr.Get("Content-Type"))
		}
		if hdr.Get("Cache-Control") != "private, no-store" || hdr.Get("X-Robots-Tag") != "noindex, nofollow" {
			t.Errorf("%s: headers %v, want private and not indexed", name, hdr)
		}
		doc, err := pdftest.Read(raw)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if doc.Pages != len(want.Tickets) || len(doc.Images) != len(want.Tickets) || len(doc.Text) != len(want.Tickets) {
			t.Fatalf("%s: got %d pages, %d images, %d pages of text; want %d of each (one per ticket)",
				name, doc.Pages, len(doc.Images), len(doc.Text), len(want.Tickets))
		}
		for i, tk := range want.Tickets {
			text := strings.ReplaceAll(doc.Text[i], "\n", " ")
			for _, s := range []string{tk.Code, "Order " + itoa(want.OrderID), when, "Demo Night"} {
				if !strings.Contains(text, s) {
					t.Errorf("%s: page %d lacks %q: %s", name, i+1, s, text)
				}
			}
		}
	}

	unpaid := a.newClient(t)
	h2 := unpaid.hold(a.EventID, firstSeats(t, a.Pool, a.EventID, 3)[2])
	co := unpaid.checkout(h2.HoldID)
	for _, suffix := range []string{web.PDFSuffix, web.ICSSuffix} {
		st, raw, _ := unpaid.raw("GET", web.OrderURL(co.OrderID)+suffix, nil, nil)
		if st != http.StatusConflict || !strings.Contains(string(raw), "no valid tickets") {
			t.Errorf("%s of an unpaid order: got %d %s, want 409 and why", suffix, st, truncate(raw))
		}
	}
}

// TestOrderCalendar: the calendar entry, by link, is one VEVENT in CRLF lines with
// the event's name, venue and start in UTC, and the order's access link as its URL,
// which opens the order.
func TestOrderCalendar(t *testing.T) {
	t.Parallel()
	a, catcher := newMailApp(t)
	b := buyConfirmed(t, a, catcher, mailtest.Address(t), firstSeats(t, a.Pool, a.EventID, 1), 1)
	s := a.stranger(t)
	st, raw, hdr := s.raw("GET", strings.Replace(b.link, "?t=", web.ICSSuffix+"?t=", 1), nil, nil)
	if st != http.StatusOK || hdr.Get("Content-Type") != "text/calendar; charset=utf-8" {
		t.Fatalf("calendar by link: got %d %q, want 200 text/calendar", st, hdr.Get("Content-Type"))
	}
	text := string(raw)
	if strings.Count(text, "\n") != strings.Count(text, "\r\n") {
		t.Error("calendar: a line ends without CR")
	}
	props := map[string]string{}
	for _, l := range strings.Split(strings.ReplaceAll(text, "\r\n ", ""), "\r\n") {
		if k, v, ok := strings.Cut(l, ":"); ok {
			props[k] = v
		}
	}
	ev, err := a.Booking.Buyer.Event(t.Context(), a.EventID)
	if err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]string{
		"SUMMARY": ev.Name, "DTSTART": ev.StartsAt.UTC().Format("20060102T150405Z"), "BEGIN": "VCALENDAR",
		"UID": "order-" + itoa(b.order.OrderID) + ".event-" + itoa(a.EventID) + "@localhost",
	} {
		if k == "BEGIN" {
			if !strings.HasPrefix(text, "BEGIN:VCALENDAR\r\n") || !strings.Contains(text, "BEGIN:VEVENT\r\n") {
				t.Errorf("calendar: not a VEVENT in a VCALENDAR")
			}
			continue
		}
		if props[k] != want {
			t.Errorf("%s: got %q, want %q", k, props[k], want)
		}
	}
	if _, err := time.Parse("20060102T150405Z", props["DTSTAMP"]); err != nil {
		t.Errorf("DTSTAMP %q: %v", props["DTSTAMP"], err)
	}
	u, err := url.Parse(props["URL"])
	if err != nil || !strings.HasSuffix(u.Path, web.OrderURL(b.order.OrderID)) || u.Query().Get("t") != b.token {
		t.Fatalf("URL: got %q, want the order's access link", props["URL"])
	}
	if st := s.do("GET", u.RequestURI(), nil, nil); st != http.StatusOK {
		t.Errorf("the calendar's link: got %d, want 200", st)
	}
	// The buyer's session gets the same link, signed afresh.
	_, own, _ := b.buyer.raw("GET", web.OrderURL(b.order.OrderID)+web.ICSSuffix, nil, nil)
	if !strings.Contains(strings.ReplaceAll(string(own), "\r\n ", ""), "URL:"+props["URL"]) {
		t.Errorf("calendar by session: want the same access link %q", props["URL"])
	}
}
