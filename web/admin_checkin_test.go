package web_test

import (
	"encoding/csv"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"boxoffice/internal/staff"
)

// checkinAt posts a scan as the door's form does.
func (c *client) checkinAt(eventID int64, gate, code string, htmx bool) pageAnswer {
	c.t.Helper()
	return c.postForm("/admin/checkin", url.Values{"_csrf": {c.csrf}, "event": {itoa(eventID)}, "gate": {gate}, "code": {code}}, htmx)
}

// TestAdminCheckin: at the door, the page remembers the event and gate, offers a big
// code field with autofocus and an aria-live answer; a scan answers valid with the
// seat, then already used with the time and gate, in the page without JavaScript and
// as a fragment for htmx; bad input is a 400 that says what to do and logs nothing.
func TestAdminCheckin(t *testing.T) {
	t.Parallel()
	a := newTestApp(t)
	o := a.buyAs(t, "door@example.com", firstSeats(t, a.Pool, a.EventID, 1)...)
	c, _ := a.staffClient(t, staff.Door)

	// A gate no scan could use is refused before it is remembered (the door's own rule).
	if bad := c.page("/admin/checkin?event="+itoa(a.EventID)+"&gate=North%07", false); bad.status != http.StatusBadRequest {
		t.Errorf("a gate with a control character: %d, want 400", bad.status)
	}
	p := c.page("/admin/checkin?event="+itoa(a.EventID)+"&gate=North", false)
	if p.status != http.StatusOK || p.doc.Find(`#code[autofocus]`).Length() != 1 ||
		p.doc.Find(`#checkin-result[aria-live]`).Length() != 1 || p.doc.Find(`label[for=code]`).Length() != 1 {
		t.Fatalf("check-in page: status %d, want a labelled code field with autofocus and a live answer", p.status)
	}
	// Remembered: the bare page is ready to scan at the same event and gate.
	if p := c.page("/admin/checkin", false); p.doc.Find(`#checkin-form input[name=gate][value=North]`).Length() != 1 {
		t.Errorf("the page did not remember the gate")
	}

	p = c.checkinAt(a.EventID, "North", o.Tickets[0].Code, false)
	if p.status != http.StatusOK || p.doc.Find(`.checkin-valid`).Length() != 1 || !strings.Contains(p.body, "Valid") {
		t.Errorf("first scan: status %d, want the page saying valid: %s", p.status, p.doc.Find("#checkin-result").Text())
	}
	p = c.checkinAt(a.EventID, "South", o.Tickets[0].Code, true)
	if p.status != http.StatusOK || p.doc.Find(`.checkin-used`).Length() != 1 || !strings.Contains(p.body, "gate North") ||
		p.doc.Find(`nav`).Length() != 0 {
		t.Errorf("second scan by htmx: status %d, want the fragment alone saying used at gate North: %s", p.status, p.body)
	}
	if p = c.checkinAt(a.EventID, "North", "nonsense", true); p.doc.Find(`.checkin-unknown`).Length() != 1 {
		t.Errorf("unknown code: want the unknown answer, got %s", p.body)
	}

	before := count(t, a.Pool, `SELECT count(*) FROM checkins`)
	for _, f := range []url.Values{
		{"event": {itoa(a.EventID)}, "gate": {"North"}, "code": {"  "}},
		{"event": {itoa(a.EventID)}, "gate": {""}, "code": {o.Tickets[0].Code}},
		{"event": {"abc"}, "gate": {"North"}, "code": {o.Tickets[0].Code}},
	} {
		f.Set("_csrf", c.csrf)
		for _, htmx := range []bool{false, true} {
			p := c.postForm("/admin/checkin", f, htmx)
			if p.status != http.StatusBadRequest || p.doc.Find(`.checkin-error`).Length() != 1 {
				t.Errorf("scan %v (htmx %v): status %d, want 400 with its message", f, htmx, p.status)
			}
		}
	}
	if p := c.postForm("/admin/checkin", url.Values{"_csrf": {c.csrf}, "event": {"999999"}, "gate": {"N"}, "code": {"x"}}, false); p.status != http.StatusNotFound {
		t.Errorf("scan at no event: status %d, want 404", p.status)
	}
	if after := count(t, a.Pool, `SELECT count(*) FROM checkins`); after != before {
		t.Errorf("refused scans logged %d rows, want none", after-before)
	}
}

// csvOf downloads an export and parses it.
func (c *client) csvOf(path string) (http.Header, [][]string) {
	c.t.Helper()
	resp, err := c.browser().Get(c.base + path)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		c.t.Fatalf("GET %s: status %d: %s", path, resp.StatusCode, b)
	}
	rows, err := csv.NewReader(resp.Body).ReadAll()
	if err != nil {
		c.t.Fatalf("GET %s: not CSV: %v", path, err)
	}
	return resp.Header, rows
}

// TestAdminExports: the orders and check-ins of an event as CSV attachments, one row
// each under a header, with text typed by staff defused against formula injection.
func TestAdminExports(t *testing.T) {
	t.Parallel()
	a := newTestApp(t)
	o := a.buyAs(t, "export@example.com", firstSeats(t, a.Pool, a.EventID, 2)...)
	door, _ := a.staffClient(t, staff.Door)
	door.checkinAt(a.EventID, "=HYPERLINK(\"http://evil.example\")", o.Tickets[0].Code, false)
	door.checkinAt(a.EventID, "North", "+sum(1)", false)
	bo, _ := a.staffClient(t, staff.BoxOffice)

	h, rows := bo.csvOf("/admin/events/" + itoa(a.EventID) + "/orders.csv")
	if !strings.HasPrefix(h.Get("Content-Type"), "text/csv") || !strings.HasPrefix(h.Get("Content-Disposition"), "attachment;") {
		t.Errorf("orders export: Content-Type %q, Content-Disposition %q, want a CSV attachment", h.Get("Content-Type"), h.Get("Content-Disposition"))
	}
	if len(rows) != 2 || rows[0][0] != "order" || rows[1][0] != itoa(o.OrderID) || rows[1][1] != "export@example.com" ||
		rows[1][2] != "confirmed" || rows[1][6] != "2" {
		t.Errorf("orders export: got %q, want the header and order %d, confirmed, 2 valid tickets", rows, o.OrderID)
	}

	_, rows = bo.csvOf("/admin/events/" + itoa(a.EventID) + "/checkins.csv")
	if len(rows) != 3 {
		t.Fatalf("check-ins export: got %d rows, want the header and 2 scans: %q", len(rows), rows)
	}
	if got := rows[1]; got[2] != `'=HYPERLINK("http://evil.example")` || got[3] != o.Tickets[0].Code || got[4] != "valid" || got[7] != itoa(o.OrderID) {
		t.Errorf("first scan: got %q, want the gate defused, the code, valid and the order", got)
	}
	if got := rows[2]; got[3] != "'+sum(1)" || got[4] != "unknown" {
		t.Errorf("second scan: got %q, want the typed code defused and unknown", got)
	}
	if n := count(t, a.Pool, `SELECT count(*) FROM audit_log WHERE action IN ('event.export_orders', 'event.export_checkins')`); n != 2 {
		t.Errorf("exports in the audit log: got %d, want 2", n)
	}
	resp, err := bo.browser().Get(bo.base + "/admin/events/999999/orders.csv")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("export of no event: status %d, want 404", resp.StatusCode)
	}
	resp, _ = door.browser().Get(door.base + "/admin/events/" + itoa(a.EventID) + "/orders.csv")
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("export as the door: status %d, want 403", resp.StatusCode)
	}
}
