package mail_test

import (
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"boxoffice/internal/booking"
	"boxoffice/internal/keyring"
	"boxoffice/internal/mail"
	"boxoffice/internal/orderlink"
)

var signer = orderlink.New([]keyring.Key{{ID: "k", Secret: []byte("a secret of at least thirty-two bytes, for tests")}})

// linksOf are the order links in text, read back: the path and the link each names.
func linksOf(t *testing.T, text string) map[string]orderlink.Link {
	t.Helper()
	out := map[string]orderlink.Link{}
	for _, f := range strings.Fields(text) {
		u, err := url.Parse(strings.TrimRight(f, ".,"))
		if err != nil || u.Host != "tickets.example.com" || !strings.HasPrefix(u.Path, "/orders/") {
			continue
		}
		l, err := signer.Parse(u.Query().Get(orderlink.Param))
		if err != nil {
			t.Errorf("link %s: %v", f, err)
			continue
		}
		out[u.Path] = l
	}
	return out
}

// TestEmailsCarryAccessLinks: with a signer, the confirmation links to the order page,
// its PDF and its calendar entry through the order's current link, in the text and
// the HTML alike; the refund email links to the page the same way.
func TestEmailsCarryAccessLinks(t *testing.T) {
	t.Parallel()
	s := site
	s.Links = signer
	r := receipt("ann@example.com")
	r.LinkVersion = 3
	want := orderlink.Link{OrderID: 42, Version: 3}
	m, err := mail.Confirmation(r, s)
	if err != nil {
		t.Fatal(err)
	}
	got := linksOf(t, m.Text)
	for _, p := range []string{"/orders/42", "/orders/42/tickets.pdf", "/orders/42/event.ics"} {
		if got[p] != want {
			t.Errorf("confirmation text: %s got %+v, want %+v", p, got[p], want)
		}
	}
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(m.HTML))
	if err != nil {
		t.Fatal(err)
	}
	var hrefs []string
	doc.Find("a[href]").Each(func(_ int, a *goquery.Selection) { h, _ := a.Attr("href"); hrefs = append(hrefs, h) })
	if html := linksOf(t, strings.Join(hrefs, " ")); len(html) != 3 || html["/orders/42/event.ics"] != want {
		t.Errorf("confirmation HTML: got links %v, want the page, PDF and calendar at %+v", html, want)
	}
	r.Order.Status, r.Order.StatusReason = booking.StatusRefunded, booking.ReasonSeatsUnavailable
	ref, err := mail.Refund(r, s)
	if err != nil {
		t.Fatal(err)
	}
	if linksOf(t, ref.Text)["/orders/42"] != want {
		t.Errorf("refund text: no access link to the order:\n%s", ref.Text)
	}
}

// TestOrderLinkAndList: the new-link email names its version in its Message-ID and
// carries the link of that version; the list has one link per order, in the order
// given, goes to the newest order's address, is kept out of the log, and is an error
// without orders.
func TestOrderLinkAndList(t *testing.T) {
	t.Parallel()
	s := site
	s.Links = signer
	r := receipt("Ann@Example.com")
	r.LinkVersion = 2
	m := mail.OrderLink(r, s)
	if m.ID != "order-42.link-2@tickets.example.com" || m.To != "Ann@Example.com" {
		t.Errorf("new link: got id %q to %q", m.ID, m.To)
	}
	if got := linksOf(t, m.Text)["/orders/42"]; got != (orderlink.Link{OrderID: 42, Version: 2}) {
		t.Errorf("new link: got %+v, want version 2:\n%s", got, m.Text)
	}

	older := receipt("ann@example.com")
	older.Order.ID, older.Order.Status, older.Order.StatusReason, older.LinkVersion = 7, booking.StatusRefunded, booking.ReasonVoided, 1
	list, err := mail.OrderList([]booking.Receipt{r, older}, "req1", s)
	if err != nil {
		t.Fatal(err)
	}
	links := linksOf(t, list.Text)
	if list.To != "Ann@Example.com" || !list.Unlogged || list.ID != "orders-req1@tickets.example.com" || len(links) != 2 ||
		links["/orders/42"].Version != 2 || links["/orders/7"].Version != 1 {
		t.Errorf("list: got to %q unlogged %v id %q links %v", list.To, list.Unlogged, list.ID, links)
	}
	for _, w := range []string{"Order 42 (4 tickets)", "Order 7 (cancelled)", "If you did not ask for this"} {
		if !strings.Contains(list.Text, w) {
			t.Errorf("list lacks %q:\n%s", w, list.Text)
		}
	}
	if strings.Index(list.Text, "Order 42") > strings.Index(list.Text, "Order 7") {
		t.Error("list: want the orders in the order given (newest first)")
	}
	if _, err := mail.OrderList(nil, "req2", s); !errors.Is(err, mail.ErrNoOrders) {
		t.Errorf("an empty list: got %v, want ErrNoOrders", err)
	}
}
