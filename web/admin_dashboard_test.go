package web_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"boxoffice/internal/booking/bookingtest"
	"boxoffice/internal/money"
	"boxoffice/internal/staff"
)

// TestAdminOrderList: /admin/orders lists the newest orders before anything is
// searched, newest first, and the next page holds the older ones; a search still
// finds one order; a buyer is sent to the login.
func TestAdminOrderList(t *testing.T) {
	t.Parallel()
	a := newTestApp(t)
	seats := firstSeats(t, a.Pool, a.EventID, 3)
	var ids []int64
	for i, seat := range seats {
		ids = append(ids, a.buyAs(t, "list"+strconv.Itoa(i)+"@example.com", seat).OrderID)
	}
	bo, _ := a.staffClient(t, staff.BoxOffice)
	p := bo.page("/admin/orders", false)
	var listed []string
	p.doc.Find(`#order-results .order-hits a`).Each(func(_ int, s *goquery.Selection) { listed = append(listed, s.AttrOr("href", "")) })
	want := []string{"/admin/orders/" + itoa(ids[2]), "/admin/orders/" + itoa(ids[1]), "/admin/orders/" + itoa(ids[0])}
	if p.status != http.StatusOK || strings.Join(listed, " ") != strings.Join(want, " ") {
		t.Errorf("/admin/orders: status %d, listed %v; want 200 and %v", p.status, listed, want)
	}
	if !strings.Contains(p.doc.Find("#order-results").Text(), "Paid") || strings.Contains(p.doc.Find("#order-results").Text(), "confirmed") {
		t.Errorf("the list words the status: %q", p.doc.Find("#order-results").Text())
	}
	older := bo.page("/admin/orders?before="+itoa(ids[2]), false)
	if n := older.doc.Find(`.order-hits a`).Length(); n != 2 || older.doc.Find(`a[href="/admin/orders/`+itoa(ids[2])+`"]`).Length() != 0 {
		t.Errorf("the page before order %d: %d orders listed, want the 2 older ones", ids[2], n)
	}
	found := bo.page("/admin/orders?q="+url.QueryEscape("list1@"), false)
	if n := found.doc.Find(`.order-hits a`).Length(); n != 1 || found.doc.Find(`a[href="/admin/orders/`+itoa(ids[1])+`"]`).Length() != 1 {
		t.Errorf("search list1@: %d orders listed, want order %d alone", n, ids[1])
	}
	buyer := a.newClient(t)
	for _, path := range []string{"/admin/orders", "/admin"} {
		if r := buyer.page(path, false); r.status != http.StatusSeeOther || !strings.HasPrefix(r.header.Get("Location"), "/admin/login") {
			t.Errorf("%s as a buyer: status %d to %q, want 303 to the login", path, r.status, r.header.Get("Location"))
		}
	}
}

// TestAdminDashboard: the landing page shows today's sales and the event's — tickets
// sold, revenue less a staff refund, the fees and tax in it, tickets left — as the database has them counted
// another way (payments and refunds that succeeded, seats unsold), and a chart of
// tickets sold per day. The door does not see sales.
func TestAdminDashboard(t *testing.T) {
	t.Parallel()
	a := newTestApp(t)
	a.runJobs(t)
	for _, q := range []string{
		`INSERT INTO event_pricing (event_id, tax_rate_bp, tax_label) VALUES ($1, 2000, 'VAT')`,
		`INSERT INTO event_fees (event_id, method, per_ticket_cents, per_order_cents) VALUES ($1, 'all', 150, 200)`,
	} {
		if _, err := a.Pool.Exec(t.Context(), q, a.EventID); err != nil {
			t.Fatal(err)
		}
	}
	seats := firstSeats(t, a.Pool, a.EventID, 3)
	o := a.buyAs(t, "dash1@example.com", seats[0], seats[1])
	a.buyAs(t, "dash2@example.com", seats[2])
	bo, _ := a.staffClient(t, staff.BoxOffice)
	if p := bo.refundVia(o.OrderID, url.Values{"kind": {"refund"}, "ticket": {itoa(o.Tickets[0].ID)}}); p.status != http.StatusSeeOther {
		t.Fatalf("refund: status %d, want 303", p.status)
	}
	a.waitJobs(t)
	bookingtest.SettleMoney(t, a.Pool, a.EventID, 15*time.Second)

	var name string
	if err := a.Pool.QueryRow(t.Context(), `SELECT name FROM events WHERE id = $1`,
		a.EventID).Scan(&name); err != nil {
		t.Fatal(err)
	}
	tickets := count(t, a.Pool, `SELECT count(*) FROM tickets WHERE event_id = $1 AND voided_at IS NULL`, a.EventID)
	revenue := count(t, a.Pool, `SELECT
		(SELECT coalesce(sum(p.amount_cents), 0) FROM payments p JOIN orders o ON o.id = p.order_id WHERE o.event_id = $1 AND p.state IN ('succeeded', 'refunded'))
		- (SELECT coalesce(sum(r.amount_cents), 0) FROM refunds r JOIN orders o ON o.id = r.order_id WHERE o.event_id = $1 AND r.state = 'succeeded')`, a.EventID)
	left := count(t, a.Pool, `SELECT
		(SELECT count(*) FROM seats WHERE event_id = $1 AND sold_at IS NULL)
		+ (SELECT coalesce(sum(capacity), 0) FROM ga_tiers WHERE event_id = $1)
		- (SELECT count(*) FROM tickets WHERE event_id = $1 AND ga_tier_id IS NOT NULL AND voided_at IS NULL)`, a.EventID)
	capacity := count(t, a.Pool, `SELECT (SELECT count(*) FROM seats WHERE event_id = $1) + (SELECT coalesce(sum(capacity), 0) FROM ga_tiers WHERE event_id = $1)`, a.EventID)
	// The fees and tax kept, another way: the seat lines of the valid tickets, and the
	// order fee lines of the orders that still have one (both orders here).
	kept := `SELECT
		(SELECT coalesce(sum(l.%[1]s), 0) FROM tickets t JOIN order_lines l ON l.event_id = t.event_id AND l.order_id = t.order_id AND l.seat_id = t.seat_id
		 WHERE t.event_id = $1 AND t.voided_at IS NULL)
		+ (SELECT coalesce(sum(l.%[1]s), 0) FROM order_lines l WHERE l.event_id = $1 AND l.kind = 'order_fee'
		   AND EXISTS (SELECT 1 FROM tickets t WHERE t.event_id = $1 AND t.order_id = l.order_id AND t.voided_at IS NULL))`
	fees, tax := count(t, a.Pool, fmt.Sprintf(kept, "fee_cents"), a.EventID), count(t, a.Pool, fmt.Sprintf(kept, "tax_cents"), a.EventID)
	if fees != 2*150+2*200 || tax <= 0 {
		t.Fatalf("set-up: fees %d cents, tax %d cents; want two tickets' and two orders' fees and some tax", fees, tax)
	}
	if tickets != 2 || revenue <= 0 {
		t.Fatalf("set-up: %d tickets, %d cents; want 2 tickets and some money", tickets, revenue)
	}

	p := bo.page("/admin", false)
	if p.status != http.StatusOK {
		t.Fatalf("/admin: status %d", p.status)
	}
	var row []string
	p.doc.Find("#sales-events tbody tr").Each(func(_ int, tr *goquery.Selection) {
		if strings.HasPrefix(strings.TrimSpace(tr.Find("td").First().Text()), name) {
			tr.Find("td").Each(func(_ int, td *goquery.Selection) { row = append(row, strings.Join(strings.Fields(td.Text()), " ")) })
		}
	})
	m := money.Shop{}
	// Everything was sold just now: today's figures are the event's.
	want := []string{strconv.Itoa(tickets), m.Format(revenue), strconv.Itoa(tickets), m.Format(revenue), m.Format(fees), m.Format(tax),
		strconv.Itoa(left) + " of " + strconv.Itoa(capacity)}
	if len(row) != 8 || strings.Join(row[1:], " | ") != strings.Join(want, " | ") {
		t.Errorf("the event's sales: got %q, want %q", row, want)
	}
	today := strings.Join(strings.Fields(p.doc.Find("#sales-today").Text()), " ")
	if !strings.Contains(today, strconv.Itoa(tickets)+" tickets, "+m.Format(revenue)) {
		t.Errorf("today: got %q, want %d tickets and %s", today, tickets, m.Format(revenue))
	}
	if note := p.doc.Find("#sales-fees").Text(); !strings.Contains(note, "a refunded ticket gives its fee and tax back") {
		t.Errorf("fees and tax: got %q, want the note on what they are", note)
	}
	chart := p.doc.Find("section.sales svg.chart")
	if chart.Length() != 1 || chart.Find("rect").Length() != 1 ||
		!strings.Contains(chart.Find("desc").Text(), strconv.Itoa(tickets)+" tickets sold in the last 14 days") {
		t.Errorf("chart: %d charts, %d bars, %q; want one bar for today and %d tickets", chart.Length(), chart.Find("rect").Length(), chart.Find("desc").Text(), tickets)
	}
	if bar := chart.Find("rect title").Text(); !strings.HasSuffix(bar, ": "+strconv.Itoa(tickets)) {
		t.Errorf("today's bar: %q, want %d tickets", bar, tickets)
	}

	doorman, _ := a.staffClient(t, staff.Door)
	if d := doorman.page("/admin", false); d.status != http.StatusOK || d.doc.Find("section.sales").Length() != 0 {
		t.Errorf("the door's landing page: status %d, %d sales sections; want 200 without sales", d.status, d.doc.Find("section.sales").Length())
	}
}
