package web_test

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"

	"boxoffice/internal/staff"
)

// fromAddress is a transport that sends each request as from the address addr names
// at that moment, in X-Forwarded-For: the test server trusts loopback, where a CDN's
// edge or nginx would be.
type fromAddress struct {
	mu   sync.Mutex
	addr string
}

func (f *fromAddress) set(addr string) {
	f.mu.Lock()
	f.addr = addr
	f.mu.Unlock()
}

func (f *fromAddress) RoundTrip(r *http.Request) (*http.Response, error) {
	f.mu.Lock()
	addr := f.addr
	f.mu.Unlock()
	r = r.Clone(r.Context())
	if addr != "" {
		r.Header.Set("X-Forwarded-For", addr)
	}
	return http.DefaultTransport.RoundTrip(r)
}

// browserAt is a new browser whose requests come from the address the returned
// fromAddress names (empty: the loopback address of the test).
func (a *testApp) browserAt(t *testing.T, addr string) (*client, *fromAddress) {
	t.Helper()
	f := &fromAddress{addr: addr}
	return a.newClientVia(t, f, 0), f
}

// loginAnswer posts the login form and returns the whole answer.
func (c *client) loginAnswer(email, password string) pageAnswer {
	c.t.Helper()
	return c.postForm("/admin/login", url.Values{"email": {email}, "password": {password}, "_csrf": {c.csrf}}, false)
}

// holdDelays moves every counted failure's time an hour ahead. The delays count from
// the last failure and start at a second; this stands for requests that follow one
// another within it, however slow the machine that runs the test.
func (a *testApp) holdDelays(t *testing.T) {
	t.Helper()
	if _, err := a.Pool.Exec(t.Context(), `UPDATE staff_login_throttle SET last_at = now() + interval '1 hour' WHERE failures > 0`); err != nil {
		t.Fatal(err)
	}
}

// checkThrottled checks a refused login is a 429 that says in words how long to wait,
// and says it in Retry-After too.
func checkThrottled(t *testing.T, what string, a pageAnswer) {
	t.Helper()
	retry, err := strconv.Atoi(a.header.Get("Retry-After"))
	msg := a.doc.Find(".error").Text()
	if a.status != http.StatusTooManyRequests || err != nil || retry < 1 || !strings.Contains(msg, "Wait ") {
		t.Errorf("%s: status %d, Retry-After %q, message %q; want 429 with a wait in seconds and in words",
			what, a.status, a.header.Get("Retry-After"), msg)
	}
}

// TestStaffLoginThrottle: after the free count of wrong passwords from one browser,
// that browser's right password is refused with a 429 that says how long to wait; the
// owner's own browser, which logged in before from the same address, still gets in;
// another account from the address is not affected. The owner's browser keeps a
// known-device cookie for the login form only.
func TestStaffLoginThrottle(t *testing.T) {
	t.Parallel()
	a := newTestApp(t)
	m := a.addStaff(t, staff.Door, "Dee")
	other := a.addStaff(t, staff.Door, "Eve")
	owner := a.newClient(t)
	first := owner.loginAnswer(m.Email, staffPassword)
	if first.status != http.StatusSeeOther {
		t.Fatalf("the owner's first login: status %d", first.status)
	}
	var device string
	for _, ck := range first.header.Values("Set-Cookie") {
		if strings.HasPrefix(ck, "boxoffice_staff_device=") {
			device = ck
		}
	}
	if !strings.Contains(device, "Path=/admin/login") || !strings.Contains(device, "HttpOnly") || !strings.Contains(device, "SameSite=Strict") {
		t.Errorf("the first login's cookies %q: want the known-device cookie, HttpOnly, SameSite=Strict, for the login form", first.header.Values("Set-Cookie"))
	}

	c := a.newClient(t)
	for i := range staff.DefaultPolicy().PairFree {
		if st := c.login(m.Email, "wrong password "+itoa(int64(i))); st != http.StatusUnauthorized {
			t.Fatalf("failure %d: status %d, want 401", i+1, st)
		}
	}
	a.holdDelays(t)
	checkThrottled(t, "the right password from the guessing browser", c.loginAnswer(m.Email, staffPassword))
	if st := owner.login(m.Email, staffPassword); st != http.StatusSeeOther {
		t.Errorf("the owner's own browser: status %d, want 303 (logged in)", st)
	}
	if st := a.newClient(t).login(other.Email, staffPassword); st != http.StatusSeeOther {
		t.Errorf("another account: status %d, want 303 (logged in)", st)
	}
}

// TestStaffLoginStrangerElsewhere: a stranger's 100 wrong passwords, each from an
// address of its own, are refused (401, and 429 once past the free count) and do
// not keep the owner out: the owner's browser gets in, and so does a new browser at
// the address the owner logged in from. The control: the right password from a new
// browser at an address the account does not know is refused, as the stranger's are.
func TestStaffLoginStrangerElsewhere(t *testing.T) {
	t.Parallel()
	a := newTestApp(t)
	m := a.addStaff(t, staff.BoxOffice, "Oona")
	owner := a.newClient(t)
	if st := owner.login(m.Email, staffPassword); st != http.StatusSeeOther {
		t.Fatalf("the owner's first login: status %d", st)
	}
	stranger, at := a.browserAt(t, "198.51.100.1")
	refused := 0
	for i := range 100 {
		at.set("198.51.100." + itoa(int64(i+1)))
		ans := stranger.loginAnswer(m.Email, "guess "+itoa(int64(i)))
		switch ans.status {
		case http.StatusUnauthorized:
		case http.StatusTooManyRequests:
			if refused++; refused == 1 {
				checkThrottled(t, "the stranger's first refused guess", ans)
			}
		default:
			t.Fatalf("guess %d: status %d, want 401 or 429", i+1, ans.status)
		}
	}
	if refused == 0 {
		t.Errorf("none of 100 guesses from strangers' addresses was refused: the account's count for strangers does not hold")
	}
	a.holdDelays(t)
	if st := owner.login(m.Email, staffPassword); st != http.StatusSeeOther {
		t.Errorf("the owner's browser after the guesses: status %d, want 303 (logged in)", st)
	}
	if st := a.newClient(t).login(m.Email, staffPassword); st != http.StatusSeeOther {
		t.Errorf("a new browser at the owner's address: status %d, want 303 (logged in)", st)
	}
	unknown, _ := a.browserAt(t, "203.0.113.200")
	checkThrottled(t, "the right password from an unknown browser and address", unknown.loginAnswer(m.Email, staffPassword))
}

// TestStaffLoginThrottleByAddress: wrong passwords spread over many emails from one
// address slow that address down past its free count, whatever account it tries next,
// while each account's own count stays under its limit; the owner's browser, known to
// the account, gets in from that address all the same.
func TestStaffLoginThrottleByAddress(t *testing.T) {
	t.Parallel()
	a := newTestApp(t)
	m := a.addStaff(t, staff.BoxOffice, "Bea")
	n := a.addStaff(t, staff.BoxOffice, "Ben")
	owner, at := a.browserAt(t, "")
	if st := owner.login(m.Email, staffPassword); st != http.StatusSeeOther {
		t.Fatalf("the owner's first login: status %d", st)
	}
	const office = "203.0.113.5"
	c, _ := a.browserAt(t, office)
	for i := range staff.DefaultPolicy().AddressFree {
		email := "guess" + itoa(int64(i%10)) + "@example.com" // two failures each: under the account's limits
		if st := c.login(email, "wrong password"); st != http.StatusUnauthorized {
			t.Fatalf("failure %d: status %d, want 401", i+1, st)
		}
	}
	a.holdDelays(t)
	checkThrottled(t, "another account's right password from the address", c.loginAnswer(n.Email, staffPassword))
	at.set(office)
	if st := owner.login(m.Email, staffPassword); st != http.StatusSeeOther {
		t.Errorf("the owner's browser at the address: status %d, want 303 (logged in)", st)
	}
}
