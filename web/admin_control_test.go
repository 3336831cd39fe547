package web_test

import (
	"bufio"
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"boxoffice/internal/staff"
)

// TestControlRoom: the page shows the event's figures and the sales chart described
// in words; the stream sends them again as a fragment; pause, resume and the rate
// change the event's room (a bad rate is a 422 that changes nothing), each recorded
// in the audit log.
func TestControlRoom(t *testing.T) {
	t.Parallel()
	a := newTestApp(t)
	ctx := t.Context()
	buyer := a.newClient(t)
	h := buyer.hold(a.EventID, firstSeats(t, a.Pool, a.EventID, 2)...)
	o := buyer.checkout(h.HoldID)
	buyer.pay(o.OrderID, "")
	waitOrder(t, buyer, o.OrderID, "confirmed")
	// The room on after the sale (a buyer would otherwise queue first).
	if _, err := a.Pool.Exec(ctx, `UPDATE events SET queue_enabled = true, queue_rate = 5 WHERE id = $1`, a.EventID); err != nil {
		t.Fatal(err)
	}

	c, _ := a.staffClient(t, staff.BoxOffice)
	path := "/admin/events/" + itoa(a.EventID) + "/control"
	p := c.page(path, false)
	if p.status != http.StatusOK {
		t.Fatalf("control room: %d", p.status)
	}
	sold := p.doc.Find(".tile").FilterFunction(func(_ int, s *goquery.Selection) bool { return s.Find("dt").Text() == "Sold" }).Find("dd").Text()
	if !strings.HasPrefix(strings.TrimSpace(sold), "2 ") {
		t.Errorf("Sold tile says %q, want 2 of the house", sold)
	}
	if desc := p.doc.Find("svg.chart desc").Text(); !strings.Contains(desc, "2 tickets sold") {
		t.Errorf("chart description %q does not say 2 tickets sold", desc)
	}
	if p.doc.Find("svg.chart .bars rect").Length() != 1 {
		t.Errorf("chart has %d bars, want 1 (one minute with sales)", p.doc.Find("svg.chart .bars rect").Length())
	}

	// The stream: its first figures, within a few rounds.
	sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(sctx, "GET", a.URL+path+"/stream", nil)
	resp, err := c.http.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("stream: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	var got strings.Builder
	inFigures := false
	for sc.Scan() {
		line := sc.Text()
		if line == "event: figures" {
			inFigures = true
			continue
		}
		if inFigures && strings.HasPrefix(line, "data: ") {
			got.WriteString(line[6:])
		}
		if inFigures && line == "" {
			break
		}
	}
	if !strings.Contains(got.String(), `class="tiles"`) || !strings.Contains(got.String(), "<svg") {
		t.Errorf("the stream's figures %.200q are not the tiles and chart (scan: %v)", got.String(), sc.Err())
	}
	cancel()

	paused := func() (p bool, rate float64) {
		if err := a.Pool.QueryRow(ctx, `SELECT queue_paused, queue_rate FROM events WHERE id = $1`, a.EventID).Scan(&p, &rate); err != nil {
			t.Fatal(err)
		}
		return p, rate
	}
	if r := c.postForm(path+"/pause", url.Values{"_csrf": {c.csrf}}, false); r.status != http.StatusSeeOther {
		t.Fatalf("pause: %d", r.status)
	}
	if p, _ := paused(); !p {
		t.Error("not paused after the pause")
	}
	if after := c.page(path+"?done=paused", false); !strings.Contains(after.doc.Find(".tiles").Text(), "paused") ||
		after.doc.Find(`form[action$="/resume"]`).Length() != 1 {
		t.Error("the page does not show the pause and the way to resume")
	}
	if r := c.postForm(path+"/resume", url.Values{"_csrf": {c.csrf}}, false); r.status != http.StatusSeeOther {
		t.Fatalf("resume: %d", r.status)
	}
	for _, bad := range []string{"", "fast", "0", "-3", "1e9", "NaN"} {
		if r := c.postForm(path+"/rate", url.Values{"_csrf": {c.csrf}, "rate": {bad}}, false); r.status != http.StatusUnprocessableEntity {
			t.Errorf("rate %q: %d, want 422", bad, r.status)
		}
	}
	if _, rate := paused(); rate != 5 {
		t.Errorf("refused rates changed the rate to %g", rate)
	}
	if r := c.postForm(path+"/rate", url.Values{"_csrf": {c.csrf}, "rate": {"12.5"}}, false); r.status != http.StatusSeeOther {
		t.Fatalf("rate 12.5: %d", r.status)
	}
	if p, rate := paused(); p || rate != 12.5 {
		t.Errorf("after resume and rate 12.5: paused=%v rate=%g", p, rate)
	}
	var was, now string
	if err := a.Pool.QueryRow(ctx, `SELECT before->>'rate', after->>'rate' FROM audit_log WHERE action = 'queue.rate'`).Scan(&was, &now); err != nil || was != "5" || now != "12.5" {
		t.Errorf("audit of the rate: before %q after %q (%v), want 5 and 12.5", was, now, err)
	}
	for _, action := range []string{"queue.pause", "queue.resume", "queue.rate"} {
		if n := count(t, a.Pool, `SELECT count(*) FROM audit_log WHERE action = $1 AND subject = $2`, action, "event "+itoa(a.EventID)); n != 1 {
			t.Errorf("audit log has %d %s entries, want 1", n, action)
		}
	}
}

// TestControlRoomShowsTheRateHeldBack: once the sale's steps are past LATENCY_BOUND,
// the running room admits slower than its setting, and the control room says at what
// rate and why; the same slow steps with the bound off change nothing.
func TestControlRoomShowsTheRateHeldBack(t *testing.T) {
	t.Parallel()
	for _, bound := range []string{"250ms", "off"} {
		t.Run("LATENCY_BOUND="+bound, func(t *testing.T) {
			t.Parallel()
			a := newTestApp(t, fastQueue, func(o *appOptions) {
				if o.Env == nil {
					o.Env = map[string]string{}
				}
				o.Env["LATENCY_BOUND"] = bound
			})
			roomOn(t, a, a.EventID, 10, 40, time.Minute)
			runQueue(t, a)
			c, _ := a.staffClient(t, staff.BoxOffice)
			path := "/admin/events/" + itoa(a.EventID) + "/control"
			admission := func() string {
				p := c.page(path, false)
				return strings.Join(strings.Fields(p.doc.Find(".tile").FilterFunction(func(_ int, s *goquery.Selection) bool {
					return s.Find("dt").Text() == "Admission"
				}).Find("dd").Text()), " ")
			}
			if got := admission(); got != "40/s" {
				t.Fatalf("admission tile before anything is slow: %q, want 40/s", got)
			}
			for range 30 { // half a second a step: twice the default bound
				a.App.Load.Step(500 * time.Millisecond)
			}
			if bound == "off" {
				time.Sleep(2 * time.Second) // the governor's period, twice: nothing may change
				if got := admission(); got != "40/s" {
					t.Errorf("with the bound off: %q, want 40/s", got)
				}
				return
			}
			want := "32.0/s of 40: held back while the sale's steps are slow" // a fifth off
			deadline := time.Now().Add(15 * time.Second)
			got := admission()
			for got != want && time.Now().Before(deadline) {
				time.Sleep(100 * time.Millisecond)
				got = admission()
			}
			if got != want {
				t.Errorf("admission tile after slow steps: %q, want %q", got, want)
			}
		})
	}
}

// TestControlStreamEndsOnLogout: an open control-room stream ends once its member is
// logged out (in another tab), as the next request would be refused; reading it to
// its end is bounded by a deadline that only a stream that never ends would meet.
func TestControlStreamEndsOnLogout(t *testing.T) {
	t.Parallel()
	a := newTestApp(t)
	c, _ := a.staffClient(t, staff.BoxOffice)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", a.URL+"/admin/events/"+itoa(a.EventID)+"/control/stream", nil)
	resp, err := c.http.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() && sc.Text() != "event: figures" {
	}
	if r := c.postForm("/admin/logout", url.Values{"_csrf": {c.csrf}}, false); r.status != http.StatusSeeOther {
		t.Fatalf("logout: %d", r.status)
	}
	for sc.Scan() {
	}
	if ctx.Err() != nil {
		t.Error("the stream was still open 30 s after its member logged out")
	}
}

// TestControlRoomPresale: while a presale's room is on, the control room shows its
// queue and shoppers beside the public room's, and /metrics reports them apart from
// the public room's; once the public onsale has come the presale's tiles are gone.
func TestControlRoomPresale(t *testing.T) {
	t.Parallel()
	a := presaleApp(t, "MEMBERS", presaleNow, 0, true, fastQueue)
	ada := a.newClient(t)
	enterCode(t, ada, a.EventID, "MEMBERS")
	if q := ada.queue("POST", a.EventID); !q.Admitted {
		waitAdmitted(t, ada, a.EventID, 20*time.Second)
	}

	c, _ := a.staffClient(t, staff.BoxOffice)
	path := "/admin/events/" + itoa(a.EventID) + "/control"
	tile := func(p pageAnswer, name string) (string, bool) {
		dd := p.doc.Find(".tile").FilterFunction(func(_ int, s *goquery.Selection) bool {
			return strings.HasPrefix(strings.TrimSpace(s.Find("dt").Text()), name)
		}).Find("dd")
		return strings.TrimSpace(dd.Text()), dd.Length() == 1
	}
	p := c.page(path, false)
	if p.status != http.StatusOK {
		t.Fatalf("control room: %d", p.status)
	}
	if got, ok := tile(p, "Presale shopping now"); !ok || got != "1" {
		t.Errorf("presale shopping now: got %q (shown %v), want 1, the code holder", got, ok)
	}
	if got, ok := tile(p, "Presale queue"); !ok || got != "0" {
		t.Errorf("presale queue: got %q (shown %v), want 0", got, ok)
	}
	if got, ok := tile(p, "Shopping now"); !ok || !strings.HasPrefix(got, "0 ") {
		t.Errorf("the public room's shoppers: got %q (shown %v), want 0", got, ok)
	}

	rec := httptest.NewRecorder()
	a.App.Metrics.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	ev := itoa(a.EventID)
	for _, want := range []string{`boxoffice_presale_queue_active{event="` + ev + `"} 1`, `boxoffice_presale_queue_length{event="` + ev + `"} 0`} {
		if !strings.Contains(rec.Body.String(), "\n"+want+"\n") {
			t.Errorf("metrics: no line %q", want)
		}
	}

	setWindow(t, a.Pool, a.EventID, windowOpen)
	for deadline := time.Now().Add(10 * time.Second); ; {
		// Shown until the server reads the event's new window (within a second).
		if _, ok := tile(c.page(path, false), "Presale queue"); !ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the presale's tiles still shown 10 s after the public onsale")
		}
		time.Sleep(100 * time.Millisecond) // polling, as the page's stream does
	}
}
