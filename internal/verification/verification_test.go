package verification

import (
	"context"
	"errors"
	"regexp"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"boxoffice/internal/dbtest"
	"boxoffice/internal/demo"
	"boxoffice/internal/mail"
)

// queued records the link emails a service queues, as the job queue would take them.
type queued struct {
	mu    sync.Mutex
	links []struct{ event, email int64 }
}

func (q *queued) VerificationLink(_ context.Context, _ pgx.Tx, eventID, emailID int64, _ int) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.links = append(q.links, struct{ event, email int64 }{eventID, emailID})
	return nil
}

func (q *queued) count() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.links)
}

var testKey = Key{ID: "k1", Secret: []byte("test secret, 32 bytes long......")}

type fixture struct {
	pool  *pgxpool.Pool
	svc   *Service
	jobs  *queued
	event int64
}

func newFixture(t *testing.T, opt Options) *fixture {
	t.Helper()
	pool := dbtest.Pool(t)
	now := time.Now()
	ev, err := demo.Create(t.Context(), pool, demo.EventSpec{Slug: "verified", Name: "Verified Night", Venue: "Hall", City: "Berlin",
		StartsAt: now.Add(24 * time.Hour), OnsaleAt: now.Add(time.Hour),
		Sections: []demo.Section{{Name: "Stalls", Rows: 1, SeatsPerRow: 4, Prices: []demo.RowPrice{{FromRow: 0, Tier: "P", PriceCents: 3000}}}}})
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{pool: pool, svc: New(pool, []Key{testKey}, opt), jobs: &queued{}, event: ev}
	f.svc.SetJobs(f.jobs)
	return f
}

var tokenInText = regexp.MustCompile(`/verify\?token=([A-Za-z0-9_-]+)`)

// link is the token of the link email the registration of addr would send now.
func (f *fixture) link(t *testing.T, addr string) string {
	t.Helper()
	var id int64
	if err := f.pool.QueryRow(t.Context(), `SELECT id FROM buyer_emails WHERE email = $1`, addr).Scan(&id); err != nil {
		t.Fatalf("the address %s: %v", addr, err)
	}
	msg, err := f.svc.LinkMail(t.Context(), f.event, id, mail.Site{BaseURL: "https://tickets.example"})
	if err != nil {
		t.Fatalf("LinkMail: %v", err)
	}
	if msg.To != addr || !msg.Unlogged {
		t.Errorf("the email: got to %q, unlogged %v; want to %q, unlogged", msg.To, msg.Unlogged, addr)
	}
	m := tokenInText.FindStringSubmatch(msg.Text)
	if m == nil {
		t.Fatalf("no link in the email: %q", msg.Text)
	}
	return m[1]
}

// linkNumber registers addr again until the service has queued n links in all.
func (f *fixture) linkNumber(t *testing.T, addr string, n int) {
	t.Helper()
	dbtest.Eventually(t, "link email number "+strconv.Itoa(n), 10*time.Second, func() bool {
		f.register(t, addr)
		return f.jobs.count() >= n
	})
}

func (f *fixture) register(t *testing.T, email string) {
	t.Helper()
	if err := f.svc.Register(t.Context(), f.event, email); err != nil {
		t.Fatalf("Register(%q): %v", email, err)
	}
}

func TestNormalise(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"  Ann@Example.COM ":               "ann@example.com",
		"a.b+tag@mail.example":             "a.b+tag@mail.example",
		"":                                 "",
		"not an address":                   "",
		"Ann <ann@example.com>":            "",
		"ann@localhost":                    "",
		"ann@example.com, bob@example.com": "",
	} {
		got, err := Normalise(in)
		if got != want || (want == "") != errors.Is(err, ErrInvalidEmail) {
			t.Errorf("Normalise(%q): got %q, %v; want %q", in, got, err, want)
		}
	}
}

// TestConfirmOnce: a link confirms once, binding the address to the confirming
// buyer; the same link again, or a link with one character changed, confirms
// nothing; the counts say one registered, one confirmed, whatever the letter case
// the address was typed in.
func TestConfirmOnce(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{})
	f.register(t, "Ann@Example.com")
	if n := f.jobs.count(); n != 1 {
		t.Fatalf("link emails queued: got %d, want 1", n)
	}
	tok := f.link(t, "ann@example.com")
	forged := []byte(tok)
	forged[len(forged)/2] ^= 1
	if _, err := f.svc.Confirm(t.Context(), string(forged), "buyer-1"); !errors.Is(err, ErrInvalidLink) {
		t.Errorf("a forged link: got %v, want ErrInvalidLink", err)
	}
	if ev, err := f.svc.EventOf(tok); err != nil || ev != f.event {
		t.Errorf("EventOf: got %d, %v; want %d", ev, err, f.event)
	}
	got, err := f.svc.Confirm(t.Context(), tok, "buyer-1")
	if err != nil || got.Buyer != "buyer-1" || got.EventID != f.event {
		t.Fatalf("Confirm: got %+v, %v; want buyer-1 on event %d", got, err, f.event)
	}
	if _, err := f.svc.Confirm(t.Context(), tok, "buyer-2"); !errors.Is(err, ErrLinkOver) {
		t.Errorf("the link again: got %v, want ErrLinkOver", err)
	}
	if _, err := f.svc.LinkMail(t.Context(), f.event, f.jobs.links[0].email, mail.Site{}); !errors.Is(err, ErrLinkOver) {
		t.Errorf("LinkMail after confirming: got %v, want ErrLinkOver (nothing to send)", err)
	}
	if c, err := f.svc.Counts(t.Context(), f.event); err != nil || c != (Counts{Registered: 1, Confirmed: 1}) {
		t.Errorf("Counts: got %+v, %v; want 1 registered, 1 confirmed", c, err)
	}
}

// TestLinkExpires: a link past its end confirms nothing, by the database's clock;
// the control, another address's link used before its end, confirms.
func TestLinkExpires(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{LinkTTL: 2 * time.Second})
	f.register(t, "late@example.com")
	f.register(t, "prompt@example.com")
	late, prompt := f.link(t, "late@example.com"), f.link(t, "prompt@example.com")
	if _, err := f.svc.Confirm(t.Context(), prompt, "buyer-p"); err != nil {
		t.Fatalf("control, a link before its end: %v", err)
	}
	dbtest.Eventually(t, "the link's end passed on the database clock", 10*time.Second, func() bool {
		var over bool
		err := f.pool.QueryRow(t.Context(), `SELECT bool_and(now() > link_expires_at) FROM email_registrations r
			JOIN buyer_emails b ON b.id = r.email_id WHERE b.email = 'late@example.com'`).Scan(&over)
		return err == nil && over
	})
	if _, err := f.svc.Confirm(t.Context(), late, "buyer-l"); !errors.Is(err, ErrLinkOver) {
		t.Errorf("a link past its end: got %v, want ErrLinkOver", err)
	}
	if c, _ := f.svc.Counts(t.Context(), f.event); c != (Counts{Registered: 2, Confirmed: 1}) {
		t.Errorf("Counts: got %+v, want 2 registered, 1 confirmed", c)
	}
}

// TestNewLinkReplacesOld: registering again sends a new link, and the earlier one
// stops working; a second confirmation of the address, from another buyer, gives
// that buyer the address's first buyer id.
func TestNewLinkReplacesOld(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{Gap: time.Millisecond})
	f.register(t, "bo@example.com")
	old := f.link(t, "bo@example.com")
	if _, err := f.svc.Confirm(t.Context(), old, "first"); err != nil {
		t.Fatal(err)
	}
	f.linkNumber(t, "bo@example.com", 2)
	replaced := f.link(t, "bo@example.com")
	f.linkNumber(t, "bo@example.com", 3)
	newer := f.link(t, "bo@example.com")
	if _, err := f.svc.Confirm(t.Context(), replaced, "second"); !errors.Is(err, ErrLinkOver) {
		t.Errorf("a replaced link: got %v, want ErrLinkOver", err)
	}
	got, err := f.svc.Confirm(t.Context(), newer, "second")
	if err != nil || got.Buyer != "first" {
		t.Errorf("confirming again from another browser: got %+v, %v; want the address's buyer id %q", got, err, "first")
	}
}

// TestRegisterBounded: registering again within the gap sends no second link, and a
// registration gets at most MaxLinks links however often it is asked; every call
// answers the same (nil).
func TestRegisterBounded(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{})
	for range 3 {
		f.register(t, "gap@example.com")
	}
	if n := f.jobs.count(); n != 1 {
		t.Errorf("three registrations within a minute: got %d links, want 1", n)
	}
	g := newFixture(t, Options{Gap: time.Microsecond, MaxLinks: 2})
	for range 5 {
		g.register(t, "max@example.com")
	}
	if n := g.jobs.count(); n > 2 {
		t.Errorf("five registrations, at most 2 links: got %d", n)
	}
	if err := g.svc.Register(t.Context(), g.event, "not an address"); !errors.Is(err, ErrInvalidEmail) {
		t.Errorf("a registration of no address: got %v, want ErrInvalidEmail", err)
	}
}
