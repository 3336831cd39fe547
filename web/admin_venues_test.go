package web_test

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"boxoffice/internal/staff"
)

// venueForm is the editor filled in with one curved section, one straight, and a
// standing area.
func venueForm(csrf, name string) url.Values {
	return url.Values{
		"_csrf": {csrf}, "name": {name}, "city": {"Berlin"},
		"s0.name": {"Stalls"}, "s0.rows": {"5"}, "s0.seats": {"12"}, "s0.curved": {"on"},
		"s0.prices": {"A-B Front 80\nC-E Back 50"}, "s0.accessible": {"E1, E12"}, "s0.companion": {"E2, E11"},
		"s1.name": {"Balcony"}, "s1.rows": {"K-L"}, "s1.seats": {"8, 10"}, "s1.prices": {"K-L Balcony 25.50"},
		"s2.name": {""}, "s2.rows": {""}, "s2.seats": {""}, "s2.prices": {""},
		"g0.name": {"Standing"}, "g0.capacity": {"150"}, "g0.price": {"30"},
		"g1.name": {""}, "g1.capacity": {""}, "g1.price": {""},
	}
}

// TestVenueEditor: an admin previews a layout (whole page without JavaScript, the
// preview alone for htmx), saves it, and finds it again; the venue's seats are
// generated with their prices, wheelchair and companion seats.
func TestVenueEditor(t *testing.T) {
	t.Parallel()
	a := newTestApp(t)
	c, _ := a.staffClient(t, staff.Admin)
	before := catalogState(t, a.Pool)

	if p := c.page("/admin/venues/new", false); p.status != http.StatusOK || p.doc.Find("#layout-preview[hx-post]").Length() != 1 {
		t.Fatalf("GET /admin/venues/new: got %d, preview element %d; want 200 and an htmx preview", p.status, p.doc.Find("#layout-preview[hx-post]").Length())
	}
	form := venueForm(c.csrf, "Hall <b>One</b>")
	form.Set("action", "preview")
	page := c.postForm("/admin/venues", form, false)
	if page.status != http.StatusOK {
		t.Fatalf("preview: got %d, want 200: %s", page.status, page.body)
	}
	if got := page.doc.Find("svg.preview g.pseat").Length(); got != 60+18 {
		t.Errorf("preview: got %d seats drawn, want 78", got)
	}
	if got := strings.TrimSpace(page.doc.Find("#preview-summary").Text()); !strings.Contains(got, "78 seats in 2 sections") || !strings.Contains(got, "150 standing places") {
		t.Errorf("preview summary: got %q", got)
	}
	if got := page.doc.Find("svg.preview use[href='#i-acc']").Length(); got != 2 {
		t.Errorf("preview: got %d wheelchair marks, want 2", got)
	}
	// A third, blank section and a second blank area wait to be filled in.
	if page.doc.Find("input[name='s2.name']").Length() != 1 || page.doc.Find("input[name='g1.name']").Length() != 1 {
		t.Error("preview page: want a blank third section and a blank second area")
	}
	frag := c.postForm("/admin/venues", form, true)
	if frag.status != http.StatusOK || frag.doc.Find("h1").Length() != 0 || frag.doc.Find("svg.preview").Length() != 1 {
		t.Errorf("htmx preview: got %d, %d headings, %d maps; want 200, only the preview", frag.status, frag.doc.Find("h1").Length(), frag.doc.Find("svg.preview").Length())
	}
	if d := stateDiff(before, catalogState(t, a.Pool)); len(d) > 0 {
		t.Errorf("previews changed the database: %v", d)
	}

	form.Set("action", "save")
	saved := c.postForm("/admin/venues", form, false)
	loc := saved.header.Get("Location")
	if saved.status != http.StatusSeeOther || !strings.HasPrefix(loc, "/admin/venues/") {
		t.Fatalf("save: got %d to %q, want 303 to the venue", saved.status, loc)
	}
	venue := c.page(strings.TrimSuffix(loc, "?saved=1"), false)
	if venue.status != http.StatusOK || venue.doc.Find("input[name='s1.seats']").AttrOr("value", "") != "8, 10" {
		t.Fatalf("the venue: got %d, balcony seats %q; want 200, \"8, 10\"", venue.status, venue.doc.Find("input[name='s1.seats']").AttrOr("value", ""))
	}
	// Markup in the name is text, never markup.
	if venue.doc.Find("h1 b").Length() != 0 || !strings.Contains(venue.doc.Find("h1").Text(), "Hall <b>One</b>") {
		t.Errorf("venue heading: got %q, want the name escaped", venue.doc.Find("h1").Text())
	}
	id, _ := strconv.ParseInt(strings.TrimPrefix(strings.TrimSuffix(loc, "?saved=1"), "/admin/venues/"), 10, 64)
	var seats, acc, comp, cheap int
	if err := a.Pool.QueryRow(t.Context(), `SELECT count(*), count(*) FILTER (WHERE s.accessible), count(*) FILTER (WHERE s.companion),
		count(*) FILTER (WHERE t.price_cents = 2550) FROM venue_seats s JOIN venue_price_tiers t ON t.venue_id = s.venue_id AND t.id = s.tier_id
		WHERE s.venue_id = $1`, id).Scan(&seats, &acc, &comp, &cheap); err != nil {
		t.Fatal(err)
	}
	if seats != 78 || acc != 2 || comp != 2 || cheap != 18 {
		t.Errorf("stored layout: got %d seats, %d wheelchair, %d companion, %d at 25.50; want 78, 2, 2, 18", seats, acc, comp, cheap)
	}
	var audits int
	if err := a.Pool.QueryRow(t.Context(), `SELECT count(*) FROM audit_log WHERE action = 'venue.create' AND subject = $1 AND staff_id IS NOT NULL`,
		"venue:"+strconv.FormatInt(id, 10)).Scan(&audits); err != nil || audits != 1 {
		t.Errorf("audit: got %d venue.create entries by a member (err %v), want 1", audits, err)
	}
	if list := c.page("/admin/venues", false); list.status != http.StatusOK || !strings.Contains(list.doc.Find("table").Text(), "Hall <b>One</b>") {
		t.Errorf("venue list: got %d, want the new venue listed", list.status)
	}
}

// TestVenueEditorDecimalComma: prices typed with a decimal comma ("40,50") or the
// symbol are read as the organiser means them and stored in cents; the editor writes
// them back as the shop writes amounts.
func TestVenueEditorDecimalComma(t *testing.T) {
	t.Parallel()
	a := newTestApp(t)
	c, _ := a.staffClient(t, staff.Admin)
	form := venueForm(c.csrf, "Comma Hall")
	form.Set("s1.prices", "K-L Balcony 40,50")
	form.Set("g0.price", "€29,90")
	form.Set("action", "save")
	saved := c.postForm("/admin/venues", form, false)
	loc := strings.TrimSuffix(saved.header.Get("Location"), "?saved=1")
	if saved.status != http.StatusSeeOther || !strings.HasPrefix(loc, "/admin/venues/") {
		t.Fatalf("save: got %d to %q, want 303 to the venue: %s", saved.status, loc, saved.body)
	}
	id, _ := strconv.ParseInt(strings.TrimPrefix(loc, "/admin/venues/"), 10, 64)
	var balcony, standing int
	if err := a.Pool.QueryRow(t.Context(), `SELECT
		(SELECT count(*) FROM venue_seats s JOIN venue_price_tiers p ON p.venue_id = s.venue_id AND p.id = s.tier_id
		 WHERE s.venue_id = $1 AND p.price_cents = 4050),
		(SELECT price_cents FROM venue_ga_areas WHERE venue_id = $1)`, id).Scan(&balcony, &standing); err != nil {
		t.Fatal(err)
	}
	if balcony != 18 || standing != 2990 {
		t.Errorf("stored: %d seats at 4050 cents, standing at %d cents; want 18 and 2990", balcony, standing)
	}
	venue := c.page(loc, false)
	if got := venue.doc.Find("textarea[name='s1.prices']").Text(); !strings.Contains(got, "K-L Balcony 40.50") {
		t.Errorf("editor: balcony prices %q, want K-L Balcony 40.50", got)
	}
	if got := venue.doc.Find("input[name='g0.price']").AttrOr("value", ""); got != "29.90" {
		t.Errorf("editor: standing price %q, want 29.90", got)
	}
}

// TestVenueEditorBadInput: wrong layouts are a 400 (a 422 for a preview) with the
// editor and a message naming the problem, and write nothing.
func TestVenueEditorBadInput(t *testing.T) {
	t.Parallel()
	a := newTestApp(t)
	c, _ := a.staffClient(t, staff.Admin)
	before := catalogState(t, a.Pool)
	for _, tc := range []struct {
		name, key, value, want string
	}{
		{"no venue name", "name", "", "give the venue a name"},
		{"row without price", "s0.prices", "A-B Front 80", "row C has no price"},
		{"seats not a number", "s0.seats", "twelve", "not a whole number"},
		{"wheelchair space outside", "s0.accessible", "Z99", "is not in the section"},
		{"too many rows", "s0.rows", "9999", "between 1 and 200 rows"},
		{"bad capacity", "g0.capacity", "lots", "not a whole number"},
		{"negative price", "g0.price", "-5", "negative"},
		{"misplaced separators", "s1.prices", "K-L Balcony 40,5,0", "not an amount"},
		{"three decimals", "g0.price", "29.505", "too many decimals"},
		{"NUL byte", "s0.name", "Stalls\x00", "not allowed"},
	} {
		form := venueForm(c.csrf, "Hall")
		form.Set(tc.key, tc.value)
		form.Set("action", "save")
		p := c.postForm("/admin/venues", form, false)
		msg := p.doc.Find(".error[role=alert]").Text()
		if p.status != http.StatusBadRequest || !strings.Contains(msg+p.body, tc.want) {
			t.Errorf("%s: got %d, message %q; want 400 saying %q", tc.name, p.status, msg, tc.want)
		}
		form.Set("action", "preview")
		// The preview draws the layout: a venue without a name yet previews fine.
		if p := c.postForm("/admin/venues", form, true); p.status/100 != 4 && tc.key != "name" {
			t.Errorf("%s, htmx preview: got %d, want a 4xx", tc.name, p.status)
		}
	}
	if d := stateDiff(before, catalogState(t, a.Pool)); len(d) > 0 {
		t.Errorf("bad input changed the database: %v", d)
	}

	// A box-office member may look at venues but not change them.
	bo, _ := a.staffClient(t, staff.BoxOffice)
	if p := bo.page("/admin/venues", false); p.status != http.StatusOK || p.doc.Find("a[href='/admin/venues/new']").Length() != 0 {
		t.Errorf("box office, venue list: got %d with a New venue link %d; want 200 without", p.status, p.doc.Find("a[href='/admin/venues/new']").Length())
	}
	form := venueForm(bo.csrf, "Hall")
	form.Set("action", "save")
	if p := bo.postForm("/admin/venues", form, false); p.status != http.StatusForbidden {
		t.Errorf("box office saving a venue: got %d, want 403", p.status)
	}
}

// catalogState fingerprints every table a venue or an event writes, row by row.
func catalogState(t testing.TB, pool *pgxpool.Pool) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, tb := range []string{"venues", "venue_price_tiers", "venue_seats", "venue_ga_areas", "events", "price_tiers",
		"seats", "ga_tiers", "ga_stripes", "holds", "audit_log"} {
		var fp string
		if err := pool.QueryRow(t.Context(), `SELECT count(*) || ' rows, md5 ' || md5(coalesce(string_agg(t::text, ';' ORDER BY t::text), '')) FROM `+tb+` t`).Scan(&fp); err != nil {
			t.Fatalf("%s: %v", tb, err)
		}
		out[tb] = fp
	}
	return out
}
