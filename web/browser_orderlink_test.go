package web_test

import (
	"context"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"boxoffice/internal/booking"
	"boxoffice/internal/browsertest"
	"boxoffice/internal/mail/mailtest"
	"boxoffice/internal/session"
)

// TestBrowserOrderLinkOnAnotherDevice: a buyer (context A, through the API) buys two
// seats; the link in the confirmation email, read from the mail catcher, opens the
// order in a second browser context with no cookies (another phone): both tickets
// with their QR codes, and the PDF that page links to is a PDF of two pages with a
// QR image each. The browser is given no buyer session by it. A forged link and,
// once the box office revoked it, the real link open nothing; the new link that
// staff send opens the tickets again.
func TestBrowserOrderLinkOnAnotherDevice(t *testing.T) {
	t.Parallel()
	a, catcher := newMailApp(t)
	to := mailtest.Address(t)
	b := buyConfirmed(t, a, catcher, to, firstSeats(t, a.Pool, a.EventID, 2), 1)
	br := browsertest.New(t)
	phone := br.NewContext(t)

	openTickets(t, phone, a.URL+b.link, len(b.order.Tickets))
	code := browsertest.Run(t, phone, chromedp.Text(chromedp.CSS(".ticket-code code")))
	if code != b.order.Tickets[0].Code {
		t.Errorf("first ticket's code: got %q, want %q", code, b.order.Tickets[0].Code)
	}
	pdf := browsertest.Run(t, phone, chromedp.Evaluate[map[string]any](`(async () => {
		const href = document.querySelector(".order-files a[href*='tickets.pdf']").getAttribute("href");
		const r = await fetch(href);
		const text = new TextDecoder("latin1").decode(await r.arrayBuffer());
		return {status: r.status, type: r.headers.get("content-type"), head: text.slice(0, 5),
			pages: (text.match(/\/Type \/Page[^s]/g) || []).length, images: (text.match(/\/Subtype \/Image/g) || []).length};
	})()`, chromedp.EvalAwaitPromise))
	if pdf["status"] != 200.0 || pdf["type"] != "application/pdf" || pdf["head"] != "%PDF-" || pdf["pages"] != 2.0 || pdf["images"] != 2.0 {
		t.Errorf("the page's PDF: got %v, want a PDF of 2 pages with 2 QR images", pdf)
	}
	for _, ck := range cookies(t, phone) {
		if ck.Name == session.BuyerCookie {
			t.Errorf("opening the link gave the browser a session cookie")
		}
	}

	noConsoleErrors(t, phone)

	notFound(t, br.NewContext(t), a.URL+forge(b.link), "a forged link")
	if _, err := a.Booking.Desk.RevokeOrderLinks(t.Context(), b.order.OrderID, true, booking.Actor{}); err != nil {
		t.Fatal(err)
	}
	notFound(t, br.NewContext(t), a.URL+b.link, "the revoked link")
	openTickets(t, br.NewContext(t), a.URL+linkInMail(t, catcher, to, 2, "A new link"), len(b.order.Tickets))
}

// openTickets opens an order link in the tab and waits for its tickets, each with a
// drawn QR code.
func openTickets(t *testing.T, tab context.Context, url string, n int) {
	t.Helper()
	resp := browsertest.Run(t, tab, chromedp.NavigateResponse(url))
	if resp.Status != 200 {
		t.Fatalf("order link: got status %d, want 200", resp.Status)
	}
	browsertest.Do(t, tab, chromedp.WaitVisible(chromedp.CSS(".tickets .ticket svg.qr path[d]")))
	if got := js[int](t, tab, `document.querySelectorAll(".tickets .ticket svg.qr path[d]").length`); got != n {
		t.Errorf("tickets with a QR code: got %d, want %d", got, n)
	}
}

// notFound opens url in the tab and checks that it shows no order.
func notFound(t *testing.T, tab context.Context, url, what string) {
	t.Helper()
	resp := browsertest.Run(t, tab, chromedp.NavigateResponse(url))
	text := browsertest.Run(t, tab, chromedp.Text(chromedp.CSS("main")))
	if resp.Status != 404 || strings.Contains(text, "Your tickets") {
		t.Errorf("%s: got status %d, %q; want 404 and no tickets", what, resp.Status, text)
	}
}

// cookies are the tab's cookies for the page it shows.
func cookies(t *testing.T, tab context.Context) []*network.Cookie {
	t.Helper()
	ctx, cancel := context.WithTimeout(tab, browsertest.Timeout)
	defer cancel()
	res, err := chromedp.Call(ctx, network.GetCookies, network.GetCookiesParams{})
	if err != nil {
		t.Fatalf("browser cookies: %v", err)
	}
	return res.Cookies
}
