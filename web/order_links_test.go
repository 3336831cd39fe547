package web_test

import (
	"boxoffice/web"
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"boxoffice/internal/booking"
	"boxoffice/internal/mail/mailtest"
	"boxoffice/internal/session"
	"boxoffice/internal/staff"
)

// Orders' access links through HTTP: the link in the confirmation email opens the
// order from a client with no cookies, and gives it nothing more; a forged link, a
// link of another order and a revoked link open nothing; staff revoke, and revoke and
// resend, from the admin order page.

// orderLinkRe finds an order's access link in an email: its path and query.
var orderLinkRe = regexp.MustCompile(`/orders/(\d+)\?t=([A-Za-z0-9_%-]+)`)

// boughtOrder is an order bought and confirmed through the API by buyer, to an address
// of the test's own, with the link its confirmation email carries.
type boughtOrder struct {
	buyer *client
	to    string
	order web.OrderJSON
	link  string // "/orders/42?t=…"
	token string
}

// buyConfirmed holds n seats as a new buyer, checks out to to, pays, and waits for
// the confirmation email (the n-th email to reach to).
func buyConfirmed(t *testing.T, a *testApp, catcher *mailtest.Catcher, to string, seats []int64, nth int) boughtOrder {
	t.Helper()
	c := a.newClient(t)
	o := a.buyWith(t, c, to, seats...)
	link := linkInMail(t, catcher, to, nth, "Your tickets")
	if !strings.HasPrefix(link, web.OrderURL(o.OrderID)+"?t=") {
		t.Fatalf("the confirmation's link %q is not order %d's", link, o.OrderID)
	}
	tok, _ := url.QueryUnescape(orderLinkRe.FindStringSubmatch(link)[2])
	return boughtOrder{buyer: c, to: to, order: o, link: link, token: tok}
}

// linkInMail waits until n emails reached to and returns the first order link in the
// newest one whose subject starts with subject.
func linkInMail(t *testing.T, catcher *mailtest.Catcher, to string, n int, subject string) string {
	t.Helper()
	for _, s := range catcher.Wait(t, to, n) {
		if !strings.HasPrefix(s.Subject, subject) {
			continue
		}
		msg, err := catcher.Message(t.Context(), s.ID)
		if err != nil {
			t.Fatal(err)
		}
		m := orderLinkRe.FindString(msg.Text)
		if m == "" {
			t.Fatalf("no order link in %q:\n%s", s.Subject, msg.Text)
		}
		return m
	}
	t.Fatalf("no email %q… among the %d to %s", subject, n, to)
	return ""
}

// stranger is a client with no cookie jar: every request comes without a session, as
// from another device.
func (a *testApp) stranger(t *testing.T) *client {
	return &client{t: t, http: &http.Client{Timeout: 30 * time.Second}, base: a.URL}
}

// forge changes the token's last character, as a guess would.
func forge(link string) string {
	last := link[len(link)-1]
	swap := byte('A')
	if last == 'A' {
		swap = 'B'
	}
	return link[:len(link)-1] + string(swap)
}

// TestOrderLinkOpensAnywhere: the confirmation email's link opens the order page, its
// JSON and nothing more from a client without cookies: the tickets are there, the
// answer is private (not stored, not indexed, no Referer), no buyer session is made,
// and paying or checking out through the link is refused. Without the link, with a
// forged one or with another order's, nothing opens.
func TestOrderLinkOpensAnywhere(t *testing.T) {
	t.Parallel()
	a, catcher := newMailApp(t)
	seats := firstSeats(t, a.Pool, a.EventID, 3)
	b := buyConfirmed(t, a, catcher, mailtest.Address(t), seats[:2], 1)
	other := buyConfirmed(t, a, catcher, mailtest.Address(t), seats[2:], 1)
	s := a.stranger(t)

	p := s.page(b.link, false)
	if p.status != http.StatusOK {
		t.Fatalf("the link from another device: got %d, want 200", p.status)
	}
	checkPersonal(t, "order page by link", p)
	checkTickets(t, p.doc, b.order)
	for h, want := range map[string]string{"X-Robots-Tag": "noindex, nofollow", "Referrer-Policy": "no-referrer"} {
		if got := p.header.Get(h); got != want {
			t.Errorf("%s: got %q, want %q", h, got, want)
		}
	}
	if got, _ := p.doc.Find(`meta[name=robots]`).Attr("content"); got != "noindex" {
		t.Errorf("meta robots: got %q, want noindex", got)
	}
	for _, ck := range p.header.Values("Set-Cookie") {
		if strings.HasPrefix(ck, session.BuyerCookie+"=") {
			t.Errorf("opening the link set a session cookie: %s", ck)
		}
	}
	if p.doc.Find("[hx-headers]").Length() > 0 || strings.Contains(p.body, `name="_csrf"`) {
		t.Error("the page by link carries a CSRF token: it must offer nothing that changes the order")
	}
	for _, sel := range []string{`a[href^="/orders/` + itoa(b.order.OrderID) + `/tickets.pdf?t="]`, `a[href^="/orders/` + itoa(b.order.OrderID) + `/event.ics?t="]`, `a[href="/tickets"]`} {
		if p.doc.Find(sel).Length() == 0 {
			t.Errorf("the page by link has no %s", sel)
		}
	}
	// The status fragment htmx polls answers through the link too.
	if f := s.page(b.link, true); f.status != http.StatusOK {
		t.Errorf("the fragment by link: got %d, want 200", f.status)
	}

	for name, h := range map[string]http.Header{"header": {web.OrderTokenHeader: {b.token}}, "query": nil} {
		path := "/api/v1/orders/" + itoa(b.order.OrderID)
		if h == nil {
			path += "?t=" + url.QueryEscape(b.token)
		}
		st, raw, hdr := s.raw("GET", path, nil, h)
		var o web.OrderJSON
		if st != http.StatusOK || json.Unmarshal(raw, &o) != nil || len(o.Tickets) != 2 || o.Tickets[0].Code != b.order.Tickets[0].Code {
			t.Errorf("API by link (%s): got %d %s, want 200 with the two tickets", name, st, truncate(raw))
		}
		if hdr.Get("X-Robots-Tag") != "noindex, nofollow" || hdr.Get("Cache-Control") != "private, no-store" {
			t.Errorf("API by link (%s): headers %v, want private and not indexed", name, hdr)
		}
	}

	// The link changes nothing: a session holding it still cannot pay or see more.
	visitor := a.newClient(t)
	st, raw, _ := visitor.raw("POST", "/api/v1/orders/"+itoa(b.order.OrderID)+"/pay",
		map[string]string{"card": "4242 4242 4242 4242"}, http.Header{web.OrderTokenHeader: {b.token}})
	if e, _ := parseError(raw); st != http.StatusNotFound || e.Error != "order_not_found" {
		t.Errorf("paying through the link: got %d %s, want 404 order_not_found", st, truncate(raw))
	}

	refused := map[string]string{
		"no link":             web.OrderURL(b.order.OrderID),
		"forged link":         forge(b.link),
		"another order's":     web.OrderURL(b.order.OrderID) + "?t=" + url.QueryEscape(other.token),
		"garbage":             web.OrderURL(b.order.OrderID) + "?t=" + strings.Repeat("x", 300),
		"no such order":       web.OrderURL(b.order.OrderID+1000) + "?t=" + url.QueryEscape(b.token),
		"forged link, PDF":    strings.Replace(forge(b.link), "?t=", web.PDFSuffix+"?t=", 1),
		"forged link, .ics":   strings.Replace(forge(b.link), "?t=", web.ICSSuffix+"?t=", 1),
		"forged link, in API": "/api/v1/orders/" + itoa(b.order.OrderID) + "?" + strings.SplitN(forge(b.link), "?", 2)[1],
	}
	for name, path := range refused {
		st, raw, _ := s.raw("GET", path, nil, nil)
		if st != http.StatusNotFound || bytes.Contains(raw, []byte(b.order.Tickets[0].Code)) {
			t.Errorf("%s: got %d, want 404 and no ticket", name, st)
		}
	}
}

// TestOrderLinkRevoke: box office staff revoke an order's links from its admin page
// (audited): the link sent before stops working at once, in the page, the API and the
// files, while the buyer's own session still sees the order. Revoke and resend sends
// the buyer a new link, which works; the revoked one still does not.
func TestOrderLinkRevoke(t *testing.T) {
	t.Parallel()
	a, catcher := newMailApp(t)
	b := buyConfirmed(t, a, catcher, mailtest.Address(t), firstSeats(t, a.Pool, a.EventID, 1), 1)
	s := a.stranger(t)
	if p := s.page(b.link, false); p.status != http.StatusOK {
		t.Fatalf("the link before revoking: got %d, want 200", p.status)
	}
	bo, _ := a.staffClient(t, staff.BoxOffice)
	admin := "/admin/orders/" + itoa(b.order.OrderID)
	p := bo.page(admin, false)
	action, _ := p.doc.Find(`form button[name=resend][value="0"]`).Closest("form").Attr("action")
	if action != admin+"/links/revoke" || p.doc.Find(`button[name=resend][value="1"]`).Length() != 1 {
		t.Fatalf("admin order page: revoke form %q, want %s with both buttons", action, admin+"/links/revoke")
	}
	door, _ := a.staffClient(t, staff.Door)
	if r := door.postForm(action, url.Values{"_csrf": {door.csrf}, "resend": {"0"}}, false); r.status != http.StatusForbidden {
		t.Errorf("door staff revoking: got %d, want 403", r.status)
	}
	if st := s.do("GET", b.link, nil, nil); st != http.StatusOK {
		t.Fatalf("the link after door staff were refused: got %d, want 200", st)
	}

	if r := bo.postForm(action, url.Values{"_csrf": {bo.csrf}, "resend": {"0"}}, false); r.status != http.StatusSeeOther {
		t.Fatalf("revoke: got %d, want 303", r.status)
	}
	for _, path := range []string{b.link, strings.Replace(b.link, "?t=", web.PDFSuffix+"?t=", 1), "/api/v1/orders/" + itoa(b.order.OrderID) + "?t=" + url.QueryEscape(b.token)} {
		if st := s.do("GET", path, nil, nil); st != http.StatusNotFound {
			t.Errorf("revoked link %s: got %d, want 404", path, st)
		}
	}
	if st := b.buyer.do("GET", "/api/v1/orders/"+itoa(b.order.OrderID), nil, nil); st != http.StatusOK {
		t.Errorf("the buyer's own session after revoking: got %d, want 200", st)
	}

	if r := bo.postForm(action, url.Values{"_csrf": {bo.csrf}, "resend": {"1"}}, false); r.status != http.StatusSeeOther {
		t.Fatalf("revoke and resend: got %d, want 303", r.status)
	}
	fresh := linkInMail(t, catcher, b.to, 2, "A new link to your order")
	if fresh == b.link {
		t.Fatal("the new link is the revoked one")
	}
	pg := s.page(fresh, false)
	if pg.status != http.StatusOK {
		t.Fatalf("the new link: got %d, want 200", pg.status)
	}
	checkTickets(t, pg.doc, b.order)
	if st := s.do("GET", b.link, nil, nil); st != http.StatusNotFound {
		t.Errorf("the first link after the resend: got %d, want 404", st)
	}
	actions := auditActions(t, a, b.order.OrderID)
	if strings.Join(actions, " ") != "order.link_revoke order.link_resend" {
		t.Errorf("audit: got %v, want order.link_revoke then order.link_resend", actions)
	}
	if got := bo.page(admin, false); !strings.Contains(got.doc.Find("main").Text(), "version 3") {
		t.Errorf("admin order page after two revocations does not say version 3")
	}
}

// auditActions are the audit log's actions on the order, oldest first.
func auditActions(t *testing.T, a *testApp, orderID int64) []string {
	t.Helper()
	rows, err := a.Pool.Query(t.Context(), `SELECT action FROM audit_log WHERE subject = $1 ORDER BY id`, booking.OrderSubject(orderID))
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	return out
}

// TestRequestLogRedactsTokens: the request log keeps no access token nor verification
// token, whichever parameter order; the rest of the address stays.
func TestRequestLogRedactsTokens(t *testing.T) {
	t.Parallel()
	var buf lockedBuffer
	a := newTestApp(t, func(o *appOptions) { o.Log = slog.New(slog.NewJSONHandler(&buf, nil)) })
	a.stranger(t).do("GET", "/orders/1?t=s3cr3t-t0ken&x=1", nil, nil)
	if strings.Contains(buf.String(), "s3cr3t") || !strings.Contains(buf.String(), `"uri":"/orders/1?t=REDACTED&x=1"`) {
		t.Errorf("request log: got %s, want the token redacted", buf.String())
	}
}
