package web_test

import (
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"boxoffice/internal/mail/mailtest"
	"boxoffice/web"
)

// "Find my tickets" through HTTP: one email listing the links of an address's orders,
// the same answer for an address with none, and the limits per client address and
// per email address.

// findTickets posts the page's form for addr from the client address from (through
// X-Forwarded-For, which the server trusts from loopback; "" for loopback itself).
func findTickets(t *testing.T, c *client, addr, from string) pageAnswer {
	t.Helper()
	form := url.Values{"_csrf": {c.csrf}, "email": {addr}}
	if from == "" {
		return c.postForm(web.TicketsPath, form, false)
	}
	cc := *c
	cc.http = &http.Client{Jar: c.http.Jar, Timeout: c.http.Timeout, Transport: at(from)}
	return cc.postForm(web.TicketsPath, form, false)
}

// askUntilRefused asks (ask(i) for the i-th) until an ask is refused with 429 and
// returns that answer and how many went through before it; it fails the test if none
// is refused within 15 seconds. The limiter lets asks through uncounted while Redis
// is slow to answer (it fails open, for 2 seconds at a time), so on a loaded machine
// the refusal may come later than the limit; never earlier.
func askUntilRefused(t *testing.T, ask func(i int) pageAnswer) (pageAnswer, int) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for i := 0; ; i++ {
		p := ask(i)
		switch {
		case p.status == http.StatusTooManyRequests:
			return p, i
		case p.status != http.StatusOK:
			t.Fatalf("ask %d: got %d, want 200 or 429", i+1, p.status)
		case time.Now().After(deadline):
			t.Fatalf("no ask refused in %d asks over 15 s", i+1)
		}
	}
}

// TestFindMyTickets: an address with two orders (typed in another case than at
// checkout) gets one email listing both, whose links open them from another device;
// an address with none gets the same page, word for word but the address, and no
// email; the API answers alike; the order page and every page's footer link to the
// form.
func TestFindMyTickets(t *testing.T) {
	t.Parallel()
	a, catcher := newMailApp(t)
	to := mailtest.Address(t)
	seats := firstSeats(t, a.Pool, a.EventID, 2)
	first := buyConfirmed(t, a, catcher, to, seats[:1], 1)
	second := buyConfirmed(t, a, catcher, to, seats[1:], 2)
	if p := first.buyer.page(first.link, false); p.doc.Find(`a[href="/tickets"]`).Length() < 2 {
		t.Errorf("order page: want the footer's and the page's own link to /tickets")
	}
	if p := a.stranger(t).page("/", false); p.doc.Find(`footer a[href="/tickets"]`).Length() != 1 {
		t.Errorf("home page: no link to /tickets in the footer")
	}

	c := a.newClient(t)
	form := c.page(web.TicketsPath, false)
	if form.status != http.StatusOK || form.doc.Find(`form[action="/tickets"] input[name=email]`).Length() != 1 {
		t.Fatalf("find page: got %d, want the form", form.status)
	}
	known := c.postForm(web.TicketsPath, url.Values{"_csrf": {c.csrf}, "email": {strings.ToUpper(to)}}, false)
	unknown := mailtest.Address(t)
	none := c.postForm(web.TicketsPath, url.Values{"_csrf": {c.csrf}, "email": {unknown}}, false)
	if known.status != http.StatusOK || none.status != http.StatusOK {
		t.Fatalf("asks: got %d and %d, want 200 both", known.status, none.status)
	}
	main := func(p pageAnswer, addr string) string {
		return strings.ReplaceAll(p.doc.Find("main").Text(), addr, "ADDRESS")
	}
	if k, n := main(known, strings.ToUpper(to)), main(none, unknown); k != n || !strings.Contains(k, "Check your email") {
		t.Errorf("the answers differ by whether the address has orders:\n%s\n---\n%s", k, n)
	}
	var ans [2]web.OrderLinksAnswer
	for i, addr := range []string{to, mailtest.Address(t)} {
		if st := c.do("POST", "/api/v1/order-links", map[string]string{"email": addr}, &ans[i]); st != http.StatusAccepted {
			t.Errorf("API ask %d: got %d, want 202", i, st)
		}
	}
	if ans[0] != ans[1] {
		t.Errorf("API answers differ: %+v and %+v", ans[0], ans[1])
	}
	if st := c.do("POST", "/api/v1/order-links", map[string]string{"email": "not an address"}, nil); st != http.StatusBadRequest {
		t.Errorf("API ask for no address: got %d, want 400", st)
	}

	catcher.Wait(t, to, 4) // two confirmations, two lists (page and API)
	a.App.WaitJobs(t)
	list, err := catcher.To(t.Context(), to) // all of it, now that every job is done
	if err != nil {
		t.Fatal(err)
	}
	lists := 0
	for _, s := range list {
		if s.Subject != "Your orders and tickets" {
			continue
		}
		lists++
		msg, err := catcher.Message(t.Context(), s.ID)
		if err != nil {
			t.Fatal(err)
		}
		links := orderLinkRe.FindAllString(msg.Text, -1)
		if len(links) != 2 || links[0] != second.link || links[1] != first.link {
			t.Fatalf("the list: got links %v, want the two orders' links, newest first (%s, %s)", links, second.link, first.link)
		}
		for _, l := range links {
			if st := a.stranger(t).do("GET", l, nil, nil); st != http.StatusOK {
				t.Errorf("a listed link from another device: got %d, want 200", st)
			}
		}
	}
	if lists != 2 || len(list) != 4 {
		t.Errorf("email to the buyer: got %d lists in %d emails, want 2 lists (one per ask) and 2 confirmations", lists, len(list))
	}
	if got, err := catcher.To(t.Context(), unknown); err != nil || len(got) != 0 {
		t.Errorf("an address without orders: got %d emails (%v), want none", len(got), err)
	}
}

// TestFindMyTicketsLimited: asks for one email address stop at 3 an hour, from any
// client address, while another email address still goes through from the same one;
// asks from one client address stop at 10 an hour, while another client address still
// goes through. Each refusal is a 429 with Retry-After and words; none sends email.
func TestFindMyTicketsLimited(t *testing.T) {
	t.Parallel()
	var log lockedBuffer
	a := newTestApp(t, func(o *appOptions) {
		o.Log = slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelWarn}))
	})
	c := a.newClient(t)
	// The refusals come at the limits exactly unless the limiter stood aside meanwhile.
	exact := func(what string, passed, limit int) {
		t.Helper()
		if passed < limit || passed > limit && !strings.Contains(log.String(), "rate limiter unavailable") {
			t.Errorf("%s: refused after %d asks, want after %d", what, passed, limit)
		}
	}

	victim := mailtest.Address(t)
	refused, passed := askUntilRefused(t, func(i int) pageAnswer {
		return findTickets(t, c, victim, "198.51.100."+itoa(int64(i%250+1)))
	})
	exact("one email address, from a new client address each time", passed, web.TicketsPerEmail.Burst)
	if refused.header.Get("Retry-After") == "" || !strings.Contains(refused.doc.Find("main").Text(), "too often") {
		t.Errorf("the refusal: Retry-After %q, want one, and words on the page", refused.header.Get("Retry-After"))
	}
	if p := findTickets(t, c, mailtest.Address(t), "198.51.100.1"); p.status != http.StatusOK {
		t.Errorf("control: another email address from a client address the victim's asks came from: got %d, want 200", p.status)
	}

	_, passed = askUntilRefused(t, func(int) pageAnswer { return findTickets(t, c, mailtest.Address(t), "203.0.113.7") })
	exact("one client address, for a new email address each time", passed, web.TicketsPerAddress.Burst)
	if p := findTickets(t, c, mailtest.Address(t), "203.0.113.8"); p.status != http.StatusOK {
		t.Errorf("control: the same ask from another client address: got %d, want 200", p.status)
	}
	if n := count(t, a.Pool, `SELECT count(*) FROM river_job WHERE kind = 'order_list_email'`); n != 0 {
		t.Errorf("asks for addresses without orders queued %d emails, want none", n)
	}
}
