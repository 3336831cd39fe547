package web_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"boxoffice/internal/booking/bookingtest"
	"boxoffice/internal/mail/mailtest"
	"boxoffice/internal/money"
	"boxoffice/internal/staff"
	"boxoffice/web"
)

// buyAs buys seats as a new buyer with email and waits for the confirmation; it
// returns the order with its tickets.
func (a *testApp) buyAs(t *testing.T, email string, seats ...int64) web.OrderJSON {
	t.Helper()
	return a.buyWith(t, a.newClient(t), email, seats...)
}

// buyWith is buyAs in c's session.
func (a *testApp) buyWith(t *testing.T, c *client, email string, seats ...int64) web.OrderJSON {
	t.Helper()
	h := c.hold(a.EventID, seats...)
	var co web.CheckoutAnswerJSON
	if st := c.do("POST", "/api/v1/holds/"+h.HoldID+"/checkout", map[string]string{"email": email}, &co); st != http.StatusCreated {
		t.Fatalf("checkout: status %d", st)
	}
	c.pay(co.OrderID, "")
	return waitOrder(t, c, co.OrderID, "confirmed")
}

// runJobs works the program's River queue until the test ends.
func (a *testApp) runJobs(t *testing.T) {
	t.Helper()
	a.App.RunJobs(t)
}

// waitJobs waits until every email and refund queued so far is worked.
func (a *testApp) waitJobs(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := a.App.Jobs.WaitIdle(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestAdminOrders: the box office finds an order by email, order number and ticket
// code; sends its confirmation again (a second email arrives, the first's uniqueness
// notwithstanding, and the audit log has it); refunds one ticket (its seat is free at
// once, the ticket void, the refund done by the jobs, every invariant of seats and
// money holding), and the order page shows all of it. Bad forms are a 4xx that changes
// nothing.
func TestAdminOrders(t *testing.T) {
	t.Parallel()
	catcher := mailtest.New(t)
	a := newTestApp(t, func(o *appOptions) { o.Env = map[string]string{"SMTP_URL": catcher.SMTPURL} })
	a.runJobs(t)
	email := mailtest.Address(t)
	seats := firstSeats(t, a.Pool, a.EventID, 2)
	o := a.buyAs(t, email, seats...)
	catcher.Wait(t, email, 1)
	bo, member := a.staffClient(t, staff.BoxOffice)
	orderURL := "/admin/orders/" + itoa(o.OrderID)

	for _, q := range []string{strings.ToUpper(email[:10]), itoa(o.OrderID), o.Tickets[1].Code} {
		p := bo.page("/admin/orders?q="+url.QueryEscape(q), false)
		if p.status != http.StatusOK || p.doc.Find(`#order-results a[href="`+orderURL+`"]`).Length() != 1 {
			t.Errorf("search %q: status %d, want 200 listing order %d", q, p.status, o.OrderID)
		}
	}
	if p := bo.page("/admin/orders?q=nobody-at-all%40example.com", false); !strings.Contains(p.body, "No orders found") {
		t.Errorf("a search that finds nothing should say so")
	}
	if p := bo.page("/admin/orders?q="+strings.Repeat("x", 300), false); p.status != http.StatusBadRequest {
		t.Errorf("an overlong search: status %d, want 400", p.status)
	}

	// Resend.
	if p := bo.postForm(orderURL+"/resend", url.Values{"_csrf": {bo.csrf}}, false); p.status != http.StatusSeeOther {
		t.Fatalf("resend: status %d, want 303", p.status)
	}
	if got := catcher.Wait(t, email, 2); len(got) != 2 {
		t.Errorf("emails to the buyer: got %d, want 2", len(got))
	}
	if n := count(t, a.Pool, `SELECT count(*) FROM audit_log WHERE action = 'order.resend' AND subject = $1 AND staff_id = $2`, "order "+itoa(o.OrderID), member.ID); n != 1 {
		t.Errorf("resend audit entries: got %d, want 1", n)
	}

	// Bad forms change nothing.
	before := saleState(t, a.Pool)
	for _, f := range []url.Values{
		{"kind": {"bogus"}},
		{"kind": {"refund"}, "ticket": {"abc"}},
		{"kind": {"refund"}, "ticket": {"999999"}},
	} {
		f.Set("_csrf", bo.csrf)
		p := bo.postForm(orderURL+"/refund", f, false)
		if p.status < 400 || p.status >= 500 || p.doc.Find(`.error[role=alert]`).Length() != 1 {
			t.Errorf("refund form %v: status %d, want a 4xx with its message", f, p.status)
		}
	}
	if p := bo.postForm("/admin/orders/999999/refund", url.Values{"_csrf": {bo.csrf}, "kind": {"refund"}}, false); p.status != http.StatusNotFound {
		t.Errorf("refund of no order: status %d, want 404", p.status)
	}
	// Staff are told in staff words, and led back to the box office, not the shop.
	if p := bo.page("/admin/orders/999999", false); p.status != http.StatusNotFound ||
		strings.Contains(p.body, "browser") || p.doc.Find(`a[href="/admin"]`).Length() == 0 {
		t.Errorf("an order that does not exist: %d, %q; want 404 in staff words with a way back to /admin", p.status, p.doc.Find("main p").First().Text())
	}
	if d := stateDiff(before, saleState(t, a.Pool)); len(d) > 0 {
		t.Errorf("refused forms changed %v", d)
	}

	// Refund the first ticket.
	p := bo.refundVia(o.OrderID, url.Values{"kind": {"refund"}, "ticket": {itoa(o.Tickets[0].ID)}})
	if p.status != http.StatusSeeOther {
		t.Fatalf("refund: status %d, want 303: %s", p.status, p.body)
	}
	if !seatFree(t, a.Pool, a.EventID, o.Tickets[0].SeatID) {
		t.Errorf("the refunded ticket's seat is not free")
	}
	a.waitJobs(t)
	bookingtest.SettleMoney(t, a.Pool, a.EventID, 15*time.Second)
	page := bo.page(orderURL+"?done=refund", false)
	if page.doc.Find(`.notice[role=status]`).Length() != 1 || !strings.Contains(page.body, "refunded") ||
		page.doc.Find(`input[name=ticket]`).Length() != 1 {
		t.Errorf("the order page after the refund should say so, show the ticket refunded and offer the one left")
	}
	if page.doc.Find(`.order-history > li`).Length() != 2 {
		t.Errorf("history: got %d entries, want the resend and the refund", page.doc.Find(`.order-history > li`).Length())
	}
	// The history in words: who did what, the fields it changed, no codes or JSON.
	history := strings.Join(strings.Fields(page.doc.Find(`.order-history`).Text()), " ")
	amount := money.Shop{}.Format(count(t, a.Pool, `SELECT amount_cents FROM refunds WHERE order_id = $1`, o.OrderID))
	for _, want := range []string{"Refunded by " + member.Name + " at ", "(" + amount + ", 1 ticket)",
		"Confirmation sent again by " + member.Name, "Amount: " + amount, "Email: " + email} {
		if !strings.Contains(history, want) {
			t.Errorf("history %q: want %q in it", history, want)
		}
	}
	for _, raw := range []string{"order.refund", "order.resend", "amount_cents", "{", "confirmed"} {
		if strings.Contains(history, raw) {
			t.Errorf("history %q shows the raw %q", history, raw)
		}
	}
}

// TestBuyerPageAfterStaffRefund: the buyer's order page words what the box office did:
// a partial refund as the box office's, with the tickets left; a void as a cancellation
// with no claim that money went back.
func TestBuyerPageAfterStaffRefund(t *testing.T) {
	t.Parallel()
	a := newTestApp(t)
	seats := firstSeats(t, a.Pool, a.EventID, 3)
	buyer := a.newClient(t)
	h := buyer.hold(a.EventID, seats...)
	var co web.CheckoutAnswerJSON
	if st := buyer.do("POST", "/api/v1/holds/"+h.HoldID+"/checkout", map[string]string{"email": "page@example.com"}, &co); st != http.StatusCreated {
		t.Fatalf("checkout: %d", st)
	}
	buyer.pay(co.OrderID, "")
	o := waitOrder(t, buyer, co.OrderID, "confirmed")
	bo, _ := a.staffClient(t, staff.BoxOffice)
	refund := func(kind string, tickets ...int64) {
		f := url.Values{"kind": {kind}}
		for _, id := range tickets {
			f.Add("ticket", itoa(id))
		}
		if len(tickets) == 0 {
			f.Set("whole", "1")
		}
		if p := bo.refundVia(o.OrderID, f); p.status != http.StatusSeeOther {
			t.Fatalf("%s: status %d", kind, p.status)
		}
	}
	refund("refund", o.Tickets[0].ID)
	p := buyer.page("/orders/"+itoa(o.OrderID), false)
	if !strings.Contains(p.body, "The box office") || strings.Contains(p.body, "second payment") || p.doc.Find(".tickets li").Length() != 2 {
		t.Errorf("after a partial refund the buyer's page should say the box office refunded tickets and show the others")
	}
	refund("void")
	p = buyer.page("/orders/"+itoa(o.OrderID), false)
	if !strings.Contains(p.body, "cancelled") || strings.Contains(p.body, "refunded in full") {
		t.Errorf("after a void the buyer's page should say the tickets were cancelled, not that money went back")
	}
}
