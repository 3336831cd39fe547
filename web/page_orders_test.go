package web_test

import (
	"errors"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/skip2/go-qrcode"

	"boxoffice/internal/booking"
	"boxoffice/internal/payment"
	"boxoffice/web"
)

// TestPagePurchase buys seats and standing places through the pages alone, as a
// browser without JavaScript does: checkout page, form, 303 to the order page, which
// polls while the payment is confirmed and then shows each ticket with the QR code of
// its code. The provider confirms late, so the waiting page is seen.
func TestPagePurchase(t *testing.T) {
	t.Parallel()
	app := newTestApp(t, func(o *appOptions) {
		o.Env = map[string]string{"PAYMENT_DELIVERY": "late", "PAYMENT_LATE_DELAY": "3s"}
	})
	c := app.newClient(t)
	var m web.SeatMapJSON
	if st := c.do("GET", "/api/v1/events/"+itoa(app.EventID)+"/seatmap", nil, &m); st != http.StatusOK || len(m.GATiers) == 0 {
		t.Fatalf("seat map: got status %d with %d GA tiers", st, len(m.GATiers))
	}
	seats := c.hold(app.EventID, firstSeats(t, app.Pool, app.EventID, 2)...)
	// The standing places join the seats' hold, the buyer's basket: one checkout and
	// one order with both.
	var basket web.HoldJSON
	if st := c.do("POST", "/api/v1/events/"+itoa(app.EventID)+"/holds", map[string]any{"gaTierId": m.GATiers[0].ID, "quantity": 2}, &basket); st != http.StatusCreated {
		t.Fatalf("GA hold: got status %d, want 201", st)
	}
	if basket.HoldID != seats.HoldID || len(basket.Seats) != 2 || basket.GAPlaces == nil || basket.GAPlaces.Quantity != 2 {
		t.Fatalf("GA hold: got hold %s with %d seats and places %+v, want the seats' hold %s with 2 seats and 2 places", basket.HoldID, len(basket.Seats), basket.GAPlaces, seats.HoldID)
	}

	for _, h := range []web.HoldJSON{basket} {
		action, form := checkoutFormOf(t, c.page("/holds/"+h.HoldID+"/checkout", false))
		form.Set("email", " ada@example.com ")
		form.Set("card", "4242 4242 4242 4242")
		a := c.postForm(action, form, false)
		loc := a.header.Get("Location")
		if a.status != http.StatusSeeOther || !strings.HasPrefix(loc, "/orders/") {
			t.Fatalf("pay %s: got %d to %q, want 303 to /orders/…: %s", h.HoldID, a.status, loc, truncate([]byte(a.body)))
		}
		orderID, err := strconv.ParseInt(strings.TrimPrefix(loc, "/orders/"), 10, 64)
		if err != nil {
			t.Fatalf("Location %q: %v", loc, err)
		}

		a = c.page(loc, false)
		if a.status != http.StatusOK {
			t.Fatalf("order page: got status %d, want 200", a.status)
		}
		checkPersonal(t, "order page", a)
		checkWhole(t, "order page", a, true)
		poll := a.doc.Find(`[hx-trigger="every 1s"]`)
		if src, _ := poll.Attr("hx-get"); poll.Length() != 1 || src != loc {
			t.Errorf("waiting order page: got %d polling elements asking %q, want one asking %s", poll.Length(), src, loc)
		}
		// Parsed as by a browser with JavaScript, noscript holds text.
		if !strings.Contains(a.doc.Find("noscript").Text(), `http-equiv="refresh"`) {
			t.Errorf("waiting order page: no refresh for browsers without JavaScript")
		}

		frag := pollOrderPage(t, c, loc)
		checkPersonal(t, "final order fragment", frag)
		checkWhole(t, "final order fragment", frag, false)
		o := waitOrder(t, c, orderID, booking.StatusConfirmed)
		checkTickets(t, frag.doc, o)

		a = c.page(loc, false)
		checkWhole(t, "confirmed order page", a, true)
		if a.doc.Find("[hx-trigger]").Length() != 0 {
			t.Errorf("confirmed order page: still polling")
		}
		checkTickets(t, a.doc, o)
		if o.Email != "ada@example.com" {
			t.Errorf("order email: got %q, want it without the spaces typed around it", o.Email)
		}
		// The email may wait while a sale is busy (EMAIL_WAIT): the page says so.
		if note := a.doc.Find(".order-note").Text(); !strings.Contains(note, "A copy is on its way to ada@example.com") ||
			!strings.Contains(note, "few minutes") {
			t.Errorf("confirmed order page: %q does not say the email is on its way and may take a few minutes", note)
		}

		// Back to the checkout of a sold hold: on to its order, not "expired".
		a = c.page("/holds/"+h.HoldID+"/checkout", false)
		if a.status != http.StatusSeeOther || a.header.Get("Location") != loc {
			t.Errorf("checkout of a sold hold: got %d to %q, want 303 to %s", a.status, a.header.Get("Location"), loc)
		}
	}
}

// pollOrderPage asks for the order fragment as htmx does until it stops asking again,
// with a deadline, and returns the last fragment.
func pollOrderPage(t *testing.T, c *client, path string) pageAnswer {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		a := c.page(path, true)
		if a.status != http.StatusOK {
			t.Fatalf("order fragment: got status %d, want 200", a.status)
		}
		if a.doc.Find("[hx-trigger]").Length() == 0 {
			return a
		}
		if time.Now().After(deadline) {
			t.Fatalf("order fragment still polling after 20 s: %s", truncate([]byte(a.body)))
		}
		time.Sleep(100 * time.Millisecond) // as htmx does, only faster
	}
}

// checkTickets checks the tickets on a page against the order: one per ticket, each
// with the QR code of its code and the seat or tier it admits to.
func checkTickets(t *testing.T, doc *goquery.Document, o web.OrderJSON) {
	t.Helper()
	tickets := doc.Find("article.ticket")
	if tickets.Length() != len(o.Tickets) || len(o.Tickets) == 0 {
		t.Fatalf("tickets: got %d on the page, want %d (and some)", tickets.Length(), len(o.Tickets))
	}
	tickets.Each(func(i int, s *goquery.Selection) {
		code := strings.TrimSpace(s.Find(".ticket-code").Text())
		if code != o.Tickets[i].Code {
			t.Errorf("ticket %d: got code %q, want %q", i, code, o.Tickets[i].Code)
		}
		if err := checkQR(s.Find("svg.qr"), code); err != nil {
			t.Errorf("ticket %d: %v", i, err)
		}
		place := s.Find(".ticket-place").Text()
		if o.Tickets[i].SeatID != 0 {
			st := o.Seats[slices.IndexFunc(o.Seats, func(st web.SeatJSON) bool { return st.ID == o.Tickets[i].SeatID })]
			for _, want := range []string{st.Section, st.Row, strconv.Itoa(st.Number)} {
				if !strings.Contains(place, want) {
					t.Errorf("ticket %d: place %q lacks %q", i, place, want)
				}
			}
		} else if !strings.Contains(place, o.GAPlaces.Name) {
			t.Errorf("ticket %d: place %q lacks the tier %q", i, place, o.GAPlaces.Name)
		}
	})
}

var qrRun = regexp.MustCompile(`M(\d+) (\d+)h(\d+)v1h-\d+z`)

// checkQR redraws an SVG QR code's modules and compares them with the QR code of code.
func checkQR(svg *goquery.Selection, code string) error {
	if svg.Length() != 1 {
		return errors.New("no QR code")
	}
	d, _ := svg.Find("path").Attr("d")
	want, err := qrcode.New(code, qrcode.High)
	if err != nil {
		return err
	}
	wb := want.Bitmap()
	got := make([][]bool, len(wb))
	for i := range got {
		got[i] = make([]bool, len(wb))
	}
	for _, m := range qrRun.FindAllStringSubmatch(d, -1) {
		x, _ := strconv.Atoi(m[1])
		y, _ := strconv.Atoi(m[2])
		n, _ := strconv.Atoi(m[3])
		if y >= len(got) || x+n > len(got) {
			return errors.New("QR code path outside its square")
		}
		for i := x; i < x+n; i++ {
			got[y][i] = true
		}
	}
	for y := range wb {
		if !slices.Equal(got[y], wb[y]) {
			return errors.New("the QR code drawn is not the QR code of the ticket's code")
		}
	}
	return nil
}

// TestOrderLapsedRefund: a payment whose hold lapsed, and whose seat someone else took
// meanwhile, sells nothing; the order page says so in plain words, and stops polling.
func TestOrderLapsedRefund(t *testing.T) {
	t.Parallel()
	app := newTestApp(t)
	a, b := app.newClient(t), app.newClient(t)
	seat := firstSeats(t, app.Pool, app.EventID, 1)
	h := a.hold(app.EventID, seat...)
	co := a.checkout(h.HoldID)
	lapse(t, app.Pool, h.HoldID)
	b.hold(app.EventID, seat...)
	if got := deliver(t, app.URL, paidEvent(app.EventID, co, payment.EventSucceeded)); got != "refund_pending" {
		t.Fatalf("late payment: got outcome %q, want refund_pending", got)
	}
	for _, htmx := range []bool{false, true} {
		p := a.page(web.OrderURL(co.OrderID), htmx)
		if p.status != http.StatusOK {
			t.Fatalf("order page: got status %d, want 200", p.status)
		}
		checkPersonal(t, "refunded order page", p)
		checkWhole(t, "refunded order page", p, !htmx)
		want := "Your hold ran out before the payment completed and the seats were sold to someone else; your payment will be refunded in full."
		if txt := p.doc.Find(".order-note").Text(); !strings.Contains(txt, want) {
			t.Errorf("refund explained: got %q, want it to say %q", strings.TrimSpace(txt), want)
		}
		if p.doc.Find("[hx-trigger]").Length() != 0 || p.doc.Find("article.ticket").Length() != 0 {
			t.Errorf("refunded order: still polling, or shows tickets")
		}
	}
}

// TestOrderUnpaid: an order checked out but not paid offers to pay while the hold
// lasts, says honestly that it is over once the hold has lapsed, and never polls.
func TestOrderUnpaid(t *testing.T) {
	t.Parallel()
	app := newTestApp(t)
	c := app.newClient(t)
	h := c.hold(app.EventID, firstSeats(t, app.Pool, app.EventID, 1)...)
	co := c.checkout(h.HoldID)

	p := c.page(web.OrderURL(co.OrderID), false)
	if href, _ := p.doc.Find(".order-note a").Attr("href"); p.status != http.StatusOK || href != "/holds/"+h.HoldID+"/checkout" {
		t.Errorf("unpaid order: got status %d and link %q, want 200 and a link to pay", p.status, href)
	}
	lapse(t, app.Pool, h.HoldID)
	p = c.page(web.OrderURL(co.OrderID), false)
	if txt := p.doc.Find(".order-note").Text(); !strings.Contains(txt, "Nothing has been charged") {
		t.Errorf("unpaid order of a lapsed hold: got %q, want it to say nothing was charged", strings.TrimSpace(txt))
	}
	if p.doc.Find("[hx-trigger]").Length() != 0 {
		t.Errorf("unpaid order: polls, though nothing will change by itself")
	}
	if a := c.page("/holds/"+h.HoldID+"/checkout", false); a.status != http.StatusGone {
		t.Errorf("checkout of a lapsed hold with an unpaid order: got status %d, want 410", a.status)
	}
}

// TestOrderPagesOtherSession: another session's order and hold are not found, exactly
// like ones that do not exist; so are addresses that cannot name one.
func TestOrderPagesOtherSession(t *testing.T) {
	t.Parallel()
	app := newTestApp(t)
	a, b := app.newClient(t), app.newClient(t)
	h := a.hold(app.EventID, firstSeats(t, app.Pool, app.EventID, 1)...)
	co := a.checkout(h.HoldID)
	stranger := &client{t: t, http: &http.Client{Timeout: 30 * time.Second}, base: app.URL}
	before := saleState(t, app.Pool)

	for _, tc := range []struct {
		name string
		c    *client
		path string
		htmx bool
	}{
		{"another session's order", b, web.OrderURL(co.OrderID), false},
		{"another session's order (htmx)", b, web.OrderURL(co.OrderID), true},
		{"another session's checkout", b, "/holds/" + h.HoldID + "/checkout", false},
		{"order without a session", stranger, web.OrderURL(co.OrderID), false},
		{"no such order", a, web.OrderURL(co.OrderID + 1000), false},
		{"order address that names none", a, "/orders/abc", false},
		{"hold address that names none", a, "/holds/abc/checkout", false},
	} {
		p := tc.c.page(tc.path, tc.htmx)
		if p.status != http.StatusNotFound {
			t.Errorf("%s: got status %d, want 404", tc.name, p.status)
			continue
		}
		checkPersonal(t, tc.name, p)
		checkWhole(t, tc.name, p, !tc.htmx)
		if !strings.Contains(p.body, "cannot find this") && !strings.Contains(p.body, "no page") {
			t.Errorf("%s: got %s, want words for people", tc.name, truncate([]byte(p.body)))
		}
	}
	form := url.Values{"_csrf": {b.csrf}, "email": {"eve@example.com"}, "card": {"4242 4242 4242 4242"}}
	if p := b.postForm("/holds/"+h.HoldID+"/checkout", form, false); p.status != http.StatusNotFound {
		t.Errorf("paying another session's hold: got status %d, want 404", p.status)
	}
	if d := stateDiff(before, saleState(t, app.Pool)); len(d) > 0 {
		t.Errorf("looking at others' orders changed the sale state: %v", d)
	}
}

// TestUnknownPage: an address that names nothing is answered with a page in words, or
// its fragment for htmx.
func TestUnknownPage(t *testing.T) {
	t.Parallel()
	app := newTestApp(t)
	c := app.newClient(t)
	for _, htmx := range []bool{false, true} {
		p := c.page("/no/such/page", htmx)
		if p.status != http.StatusNotFound || !strings.Contains(p.body, "There is no page at this address") {
			t.Errorf("unknown page (htmx %v): got %d %s, want 404 in words", htmx, p.status, truncate([]byte(p.body)))
		}
		checkWhole(t, "unknown page", p, !htmx)
	}
}
