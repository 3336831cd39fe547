package web_test

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/jackc/pgx/v5"

	"boxoffice/internal/booking/bookingtest"
	"boxoffice/internal/money"
	"boxoffice/internal/staff"
)

// askRefund posts the order's refund form and wants the confirmation page; it returns
// that page and the confirmation's form as the confirm button posts it.
func (c *client) askRefund(orderID int64, form url.Values) (pageAnswer, url.Values) {
	c.t.Helper()
	form.Set("_csrf", c.csrf)
	p := c.postForm("/admin/orders/"+itoa(orderID)+"/refund", form, false)
	sel := p.doc.Find(`form[action="/admin/orders/` + itoa(orderID) + `/refund/confirm"]`)
	if p.status != http.StatusOK || sel.Length() != 1 {
		c.t.Fatalf("refund form %v: status %d, want 200 with the confirmation: %s", form, p.status, p.doc.Find(".error").Text())
	}
	confirm := url.Values{}
	sel.Find("input[type=hidden]").Each(func(_ int, s *goquery.Selection) {
		confirm.Add(s.AttrOr("name", ""), s.AttrOr("value", ""))
	})
	return p, confirm
}

// refundVia asks for a refund or void and confirms it: the answer is the confirmation's.
func (c *client) refundVia(orderID int64, form url.Values) pageAnswer {
	c.t.Helper()
	_, confirm := c.askRefund(orderID, form)
	return c.postForm("/admin/orders/"+itoa(orderID)+"/refund/confirm", confirm, false)
}

// sellAtDesk sells seats of event ev at the window by method and returns the order.
func (c *client) sellAtDesk(ev int64, token, method string, seats ...int64) int64 {
	c.t.Helper()
	f := sellForm(c, token, seats...)
	f.Set("method", method)
	ans := c.postForm("/admin/events/"+itoa(ev)+"/sell", f, false)
	loc := saleLocation.FindStringSubmatch(ans.header.Get("Location"))
	if ans.status != http.StatusSeeOther || loc == nil {
		c.t.Fatalf("sale: %d to %q, want 303 to the tickets", ans.status, ans.header.Get("Location"))
	}
	id, _ := strconv.ParseInt(loc[2], 10, 64)
	return id
}

// TestDeskCashRefundTill: a cash sale refunded at the desk. The refund form leads to a
// page listing the ticket, its price and "cash", and nothing changes until it is
// confirmed; no ticket chosen is a 400 that says so and changes nothing; the
// confirmation submitted twice refunds once, a cash refund by the member with no
// provider; "Refund whole order" confirms too. The till report, on the venue's clocks
// (a zone 14 hours from UTC), shows the member's day, and its totals per method equal
// the sums of payments and refunds read from SQL here; its CSV has the same lines.
// Someone not logged in gets the login page.
func TestDeskCashRefundTill(t *testing.T) {
	t.Parallel()
	a := newTestApp(t)
	c, m := a.staffClient(t, staff.BoxOffice)
	ev := smallEvent(t, a.Pool, "till")
	const tz = "Pacific/Kiritimati"
	if _, err := a.Pool.Exec(t.Context(), `UPDATE venues SET time_zone = $1 WHERE id = (SELECT venue_id FROM events WHERE id = $2)`, tz, ev); err != nil {
		t.Fatal(err)
	}
	seats := firstSeats(t, a.Pool, ev, 3)
	cash := c.sellAtDesk(ev, "till-cash-0123456789", "cash", seats[0], seats[1])
	card := c.sellAtDesk(ev, "till-card-0123456789", "card_present", seats[2])
	tickets := validTicketIDs(t, a, cash)

	before := saleState(t, a.Pool)
	p, confirm := c.askRefund(cash, url.Values{"kind": {"refund"}, "ticket": {itoa(tickets[0])}})
	price := count(t, a.Pool, `SELECT s.price_cents FROM tickets t JOIN seats s ON s.event_id = t.event_id AND s.id = t.seat_id WHERE t.id = $1`, tickets[0])
	if p.doc.Find("[data-ticket]").Length() != 1 || !strings.Contains(p.doc.Find(".refund-method").Text(), "Cash") ||
		strings.TrimSpace(p.doc.Find(".refund-amount").Text()) != (money.Shop{}).Format(price) {
		t.Errorf("confirmation: %d tickets, %q, %q; want one ticket, %s in cash", p.doc.Find("[data-ticket]").Length(),
			p.doc.Find(".refund-amount").Text(), p.doc.Find(".refund-method").Text(), (money.Shop{}).Format(price))
	}
	for _, f := range []url.Values{{"kind": {"refund"}}, {"kind": {"void"}}} {
		f.Set("_csrf", c.csrf)
		if r := c.postForm("/admin/orders/"+itoa(cash)+"/refund", f, false); r.status != http.StatusBadRequest ||
			!strings.Contains(r.doc.Find(".error[role=alert]").Text(), "no ticket was chosen") {
			t.Errorf("no ticket chosen (%s): %d %q, want 400 saying so", f.Get("kind"), r.status, r.doc.Find(".error").Text())
		}
	}
	empty := url.Values{"_csrf": {c.csrf}, "kind": {"refund"}, "key": {confirm.Get("key")}}
	if r := c.postForm("/admin/orders/"+itoa(cash)+"/refund/confirm", empty, false); r.status != http.StatusBadRequest {
		t.Errorf("a confirmation naming no ticket: %d, want 400", r.status)
	}
	if d := stateDiff(before, saleState(t, a.Pool)); len(d) > 0 || count(t, a.Pool, `SELECT count(*) FROM refunds`) != 0 {
		t.Fatalf("before any confirmation: changed %v", d)
	}
	for i := range 2 {
		r := c.postForm("/admin/orders/"+itoa(cash)+"/refund/confirm", confirm, false)
		if r.status != http.StatusSeeOther || !strings.Contains(r.header.Get("Location"), "how=cash") {
			t.Fatalf("confirmation %d: %d to %q, want 303 saying cash", i, r.status, r.header.Get("Location"))
		}
	}
	if n := count(t, a.Pool, `SELECT count(*) FROM refunds WHERE order_id = $1 AND staff_id = $2 AND state = 'succeeded'
		AND provider_refund_id IS NULL AND amount_cents = $3`, cash, m.ID, price); n != 1 {
		t.Errorf("cash refunds by the member after two confirmations: %d, want 1", n)
	}
	if page := c.page("/admin/orders/"+itoa(cash)+"?done=refund&how=cash", false); !strings.Contains(page.doc.Find(".notice").Text(), "till") {
		t.Errorf("the order page after a cash refund should say to count it out of the till")
	}
	if r := c.refundVia(card, url.Values{"kind": {"refund"}, "whole": {"1"}}); r.status != http.StatusSeeOther || !strings.Contains(r.header.Get("Location"), "how=card_present") {
		t.Errorf("whole card-present order: %d to %q", r.status, r.header.Get("Location"))
	}
	if st, _ := orderStatus(t, a, card); st != "refunded" {
		t.Errorf("card-present order after its whole refund: %s, want refunded", st)
	}

	day := time.Now().In(mustZone(t, tz)).Format(time.DateOnly)
	till := c.page("/admin/till?from="+day+"&to="+day, false)
	if till.status != http.StatusOK || !strings.Contains(till.doc.Find(".till-day h2").Text(), m.Name) ||
		!strings.Contains(till.doc.Find(".till-day h2").Text(), tz) {
		t.Fatalf("till: %d, groups %q; want the member's day on %s", till.status, till.doc.Find(".till-day h2").Text(), tz)
	}
	if c.page("/admin", false).doc.Find(`nav a[href="/admin/till"]`).Length() != 1 {
		t.Error("the admin menu has no link to the till")
	}
	for _, meth := range []string{"cash", "card_present"} {
		sold := count(t, a.Pool, `SELECT coalesce(sum(amount_cents), 0)::int FROM payments WHERE provider = 'box_office' AND state_reason = $1`, meth)
		back := count(t, a.Pool, `SELECT coalesce(sum(r.amount_cents), 0)::int FROM refunds r JOIN payments p ON p.id = r.payment_id
			WHERE p.provider = 'box_office' AND p.state_reason = $1`, meth)
		row := till.doc.Find(`.till-totals tr[data-method="` + meth + `"]`)
		if row.AttrOr("data-sold", "") != itoa(int64(sold)) || row.AttrOr("data-refunded", "") != itoa(int64(back)) ||
			row.AttrOr("data-net", "") != itoa(int64(sold-back)) || sold == 0 || back == 0 {
			t.Errorf("till totals for %s: sold %q, refunded %q, net %q; SQL says %d and %d", meth,
				row.AttrOr("data-sold", ""), row.AttrOr("data-refunded", ""), row.AttrOr("data-net", ""), sold, back)
		}
	}
	csv := c.page("/admin/till.csv?from="+day+"&to="+day, false)
	if csv.status != http.StatusOK || !strings.HasPrefix(csv.header.Get("Content-Type"), "text/csv") ||
		!strings.Contains(csv.body, day+","+tz+","+m.Name+",cash,1,") {
		t.Errorf("till CSV: %d %q:\n%s", csv.status, csv.header.Get("Content-Type"), csv.body)
	}
	if r := c.page("/admin/till?from="+day+"&to=2000-01-01", false); r.status != http.StatusBadRequest {
		t.Errorf("a backwards range: %d, want 400", r.status)
	}
	stranger := a.newClient(t)
	for _, path := range []string{"/admin/till", "/admin/till.csv"} {
		if r := stranger.page(path, false); r.status != http.StatusSeeOther || !strings.HasPrefix(r.header.Get("Location"), "/admin/login") {
			t.Errorf("%s without a login: %d to %q, want the login page", path, r.status, r.header.Get("Location"))
		}
	}
	if r := stranger.postForm("/admin/orders/"+itoa(cash)+"/refund/confirm", confirm, false); r.status < 300 || r.status >= 500 {
		t.Errorf("a confirmation without a login: %d, want refused", r.status)
	}
	bookingtest.CheckMoney(t, a.Pool, ev)
}

// TestDeskCardRefund: an online card payment refunded by staff goes back through the
// payment provider: the confirmation says so, the refund is the provider's (its id
// recorded, done by the jobs), and the till lists it under card.
func TestDeskCardRefund(t *testing.T) {
	t.Parallel()
	a := newTestApp(t)
	a.runJobs(t)
	o := a.buyAs(t, "card-refund@example.com", firstSeats(t, a.Pool, a.EventID, 1)...)
	c, _ := a.staffClient(t, staff.BoxOffice)
	p, _ := c.askRefund(o.OrderID, url.Values{"kind": {"refund"}, "whole": {"1"}})
	if !strings.Contains(p.doc.Find(".refund-method").Text(), "payment provider") {
		t.Errorf("confirmation of a card refund says %q, want the provider", p.doc.Find(".refund-method").Text())
	}
	if r := c.refundVia(o.OrderID, url.Values{"kind": {"refund"}, "whole": {"1"}}); r.status != http.StatusSeeOther {
		t.Fatalf("refund: %d", r.status)
	}
	a.waitJobs(t)
	bookingtest.SettleMoney(t, a.Pool, a.EventID, 15*time.Second)
	if n := count(t, a.Pool, `SELECT count(*) FROM refunds WHERE order_id = $1 AND provider_refund_id IS NOT NULL AND state = 'succeeded'`, o.OrderID); n != 1 {
		t.Errorf("provider refunds done: %d, want 1", n)
	}
	if row := c.page("/admin/till", false).doc.Find(`.till-totals tr[data-method="card"]`); row.AttrOr("data-refunded", "0") == "0" {
		t.Error("the till does not list the card refund")
	}
}

func validTicketIDs(t *testing.T, a *testApp, orderID int64) []int64 {
	t.Helper()
	rows, _ := a.Pool.Query(context.Background(), `SELECT id FROM tickets WHERE order_id = $1 AND voided_at IS NULL ORDER BY id`, orderID)
	ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		t.Fatal(err)
	}
	return ids
}

func orderStatus(t *testing.T, a *testApp, id int64) (status, reason string) {
	t.Helper()
	if err := a.Pool.QueryRow(context.Background(), `SELECT status::text, status_reason FROM orders WHERE id = $1`, id).Scan(&status, &reason); err != nil {
		t.Fatal(err)
	}
	return status, reason
}

func mustZone(t *testing.T, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Fatal(err)
	}
	return loc
}
