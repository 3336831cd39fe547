package catalog_test

import (
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"boxoffice/internal/catalog"
	"boxoffice/internal/dbtest"
	"boxoffice/internal/money"
)

// hall is a small venue: a curved section with a wheelchair space and its companion
// seat, a straight balcony of uneven rows, and a standing area.
func hall() catalog.VenueInput {
	l, err := catalog.LayoutForm{
		Sections: []catalog.SectionForm{
			{Name: "Stalls", Rows: "4", Seats: "10", Curved: true, Prices: "A-B Front 80\nC-D Back 50.50",
				Accessible: "D1", Companion: "D2"},
			{Name: "Balcony", Rows: "K-M", Seats: "6, 8, 10", Prices: "K-M Balcony 30"},
		},
		GA: []catalog.GAForm{{Name: "Standing", Capacity: "120", Price: "25"}},
	}.Parse()
	if err != nil {
		panic(err)
	}
	return catalog.VenueInput{Name: "Test Hall", City: "Berlin", Layout: l}
}

func eventAt(venueID int64, slug string) catalog.EventInput {
	now := time.Now().Truncate(time.Second)
	return catalog.EventInput{VenueID: venueID, Slug: slug, Name: "Night " + slug, StartsAt: now.Add(48 * time.Hour),
		OnsaleAt: now.Add(-time.Hour), HoldMinutes: 12, Published: true}
}

func count(t *testing.T, pool *pgxpool.Pool, sql string, args ...any) int {
	t.Helper()
	var n int
	if err := pool.QueryRow(t.Context(), sql, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return n
}

// TestCreateEventCopiesLayout: an event gets its own seats, price tiers and standing
// places from the layout, with the layout's positions and wheelchair and companion
// seats; a later edit of the layout leaves it as it was.
func TestCreateEventCopiesLayout(t *testing.T) {
	t.Parallel()
	pool := dbtest.Pool(t)
	ctx := t.Context()
	c := catalog.New(pool)
	by := catalog.Actor{Address: "192.0.2.1"}
	venue, err := c.CreateVenue(ctx, by, hall())
	if err != nil {
		t.Fatal(err)
	}
	ev, err := c.CreateEvent(ctx, by, eventAt(venue, "first"))
	if err != nil {
		t.Fatal(err)
	}
	if got := count(t, pool, `SELECT count(*) FROM seats WHERE event_id = $1`, ev); got != 40+24 {
		t.Errorf("got %d seats, want 64", got)
	}
	if got := count(t, pool, `SELECT count(*) FROM price_tiers WHERE event_id = $1`, ev); got != 3 {
		t.Errorf("got %d price tiers, want 3", got)
	}
	if got := count(t, pool, `SELECT sum(remaining) FROM ga_stripes WHERE event_id = $1`, ev); got != 120 {
		t.Errorf("got %d standing places, want 120", got)
	}
	if got := count(t, pool, `SELECT count(*) FROM seats WHERE event_id = $1 AND section = 'Stalls' AND row_label = 'D'
		AND ((number = 1 AND accessible AND NOT companion) OR (number = 2 AND companion AND NOT accessible))`, ev); got != 2 {
		t.Errorf("got %d of D1 wheelchair and D2 companion, want 2", got)
	}
	if got := count(t, pool, `SELECT count(*) FROM seats WHERE event_id = $1 AND section = 'Stalls' AND row_label = 'C' AND price_cents = 5050`, ev); got != 10 {
		t.Errorf("got %d seats of row C at 50.50, want 10", got)
	}
	// Straight rows: one y per row; curved: the ends higher than the middle.
	if got := count(t, pool, `SELECT count(DISTINCT y) FROM seats WHERE event_id = $1 AND section = 'Balcony' AND row_label = 'L'`, ev); got != 1 {
		t.Errorf("straight row L: got %d distinct y, want 1", got)
	}
	if got := count(t, pool, `SELECT count(DISTINCT y) FROM seats WHERE event_id = $1 AND section = 'Stalls' AND row_label = 'A'`, ev); got < 2 {
		t.Errorf("curved row A: got %d distinct y, want several", got)
	}
	if got := count(t, pool, `SELECT hold_minutes FROM events WHERE id = $1`, ev); got != 12 {
		t.Errorf("got hold minutes %d, want 12", got)
	}
	if got := count(t, pool, `SELECT count(*) FROM audit_log WHERE subject IN ($1, $2)`, "venue:"+itoa(venue), "event:"+itoa(ev)); got != 2 {
		t.Errorf("got %d audit entries for the venue and the event, want 2", got)
	}

	// The layout changes: a section fewer, new prices. The event keeps its inventory;
	// an event made afterwards gets the new layout.
	changed := hall()
	changed.Layout.Sections = changed.Layout.Sections[:1]
	changed.Layout.Sections[0].Prices = []catalog.RowPrice{{FromRow: 0, Tier: "Flat", PriceCents: 4000}}
	if err := c.UpdateVenue(ctx, by, venue, changed); err != nil {
		t.Fatal(err)
	}
	if got := count(t, pool, `SELECT count(*) FROM seats WHERE event_id = $1 AND section = 'Balcony'`, ev); got != 24 {
		t.Errorf("after the layout edit the first event has %d balcony seats, want its 24", got)
	}
	second, err := c.CreateEvent(ctx, by, eventAt(venue, "second"))
	if err != nil {
		t.Fatal(err)
	}
	if got := count(t, pool, `SELECT count(*) FROM seats WHERE event_id = $1 AND price_cents = 4000`, second); got != 40 {
		t.Errorf("the second event has %d seats at 40.00, want 40 (and nothing else)", got)
	}
	if got := count(t, pool, `SELECT count(*) FROM seats WHERE event_id = $1`, second); got != 40 {
		t.Errorf("the second event has %d seats, want 40", got)
	}
	v, err := c.Venue(ctx, venue)
	if err != nil || len(v.Layout.Sections) != 1 {
		t.Errorf("Venue: got %d sections, err %v; want 1", len(v.Layout.Sections), err)
	} else if seats, err := v.Layout.Seats(); err != nil || len(seats) != 40 {
		t.Errorf("Venue's layout makes %d seats (%v), want 40", len(seats), err)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// TestCreateAllOrNothing: an event refused half way (its address taken) leaves no
// venue, seat, tier or audit entry behind.
func TestCreateAllOrNothing(t *testing.T) {
	t.Parallel()
	pool := dbtest.Pool(t)
	ctx := t.Context()
	c := catalog.New(pool)
	if _, err := c.CreateVenueEvent(ctx, catalog.Actor{}, hall(), eventAt(0, "taken")); err != nil {
		t.Fatal(err)
	}
	tables := `SELECT (SELECT count(*) FROM venues) + (SELECT count(*) FROM venue_seats) + (SELECT count(*) FROM events)
		+ (SELECT count(*) FROM seats) + (SELECT count(*) FROM price_tiers) + (SELECT count(*) FROM ga_stripes)
		+ (SELECT count(*) FROM audit_log)`
	before := count(t, pool, tables)
	_, err := c.CreateVenueEvent(ctx, catalog.Actor{}, hall(), eventAt(0, "taken"))
	var inv *catalog.InvalidError
	if !errors.As(err, &inv) || inv.Field != "slug" {
		t.Fatalf("second event at the same address: got %v, want an invalid slug", err)
	}
	if after := count(t, pool, tables); after != before {
		t.Errorf("rows: got %d after the refusal, want %d as before", after, before)
	}
}

// TestEventValidation: bad settings are refused with the field they concern and
// nothing is written.
func TestEventValidation(t *testing.T) {
	t.Parallel()
	pool := dbtest.Pool(t)
	ctx := t.Context()
	c := catalog.New(pool)
	venue, err := c.CreateVenue(ctx, catalog.Actor{}, hall())
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, field string
		change      func(*catalog.EventInput)
	}{
		{"no name", "name", func(e *catalog.EventInput) { e.Name = "  " }},
		{"bad slug", "slug", func(e *catalog.EventInput) { e.Slug = "Not A Slug" }},
		{"close before onsale", "salesCloseAt", func(e *catalog.EventInput) { e.SalesCloseAt = e.OnsaleAt.Add(-time.Minute) }},
		{"close equals onsale", "salesCloseAt", func(e *catalog.EventInput) { e.SalesCloseAt = e.OnsaleAt }},
		{"close after start", "salesCloseAt", func(e *catalog.EventInput) { e.SalesCloseAt = e.StartsAt.Add(time.Minute) }},
		{"onsale after start", "salesCloseAt", func(e *catalog.EventInput) { e.OnsaleAt = e.StartsAt.Add(time.Hour) }},
		{"hold minutes 61", "holdMinutes", func(e *catalog.EventInput) { e.HoldMinutes = 61 }},
		{"hold minutes negative", "holdMinutes", func(e *catalog.EventInput) { e.HoldMinutes = -1 }},
		{"no slots", "queueSlots", func(e *catalog.EventInput) { e.Queue.Slots = -5 }},
		{"too many slots", "queueSlots", func(e *catalog.EventInput) { e.Queue.Slots = catalog.MaxQueueSlots + 1 }},
		{"rate too high", "queueRate", func(e *catalog.EventInput) { e.Queue.Rate = catalog.MaxQueueRate + 1 }},
		{"token too short", "queueTokenTTL", func(e *catalog.EventInput) { e.Queue.TokenTTL = time.Second }},
		{"idle window negative", "queueIdle", func(e *catalog.EventInput) { e.Queue.Idle = -time.Minute }},
		{"idle window in parts of a second", "queueIdle", func(e *catalog.EventInput) { e.Queue.Idle = 1500 * time.Millisecond }},
		{"idle window too long", "queueIdle", func(e *catalog.EventInput) { e.Queue.Idle = catalog.MaxIdle + time.Second }},
		{"unknown venue", "venueId", func(e *catalog.EventInput) { e.VenueID = venue + 1000 }},
	} {
		e := eventAt(venue, "ok")
		tc.change(&e)
		_, err := c.CreateEvent(ctx, catalog.Actor{}, e)
		var inv *catalog.InvalidError
		if !errors.As(err, &inv) || inv.Field != tc.field {
			t.Errorf("%s: got %v, want an error about %s", tc.name, err, tc.field)
		}
	}
	// Equal close and start is allowed.
	e := eventAt(venue, "equal")
	e.SalesCloseAt = e.StartsAt
	if _, err := c.CreateEvent(ctx, catalog.Actor{}, e); err != nil {
		t.Errorf("sales closing at the start: got %v, want it accepted", err)
	}
	if got := count(t, pool, `SELECT count(*) FROM events`); got != 1 {
		t.Errorf("got %d events, want only the valid one", got)
	}
}

// TestLayoutForm: the editor's text, right and wrong.
func TestLayoutForm(t *testing.T) {
	t.Parallel()
	good := catalog.SectionForm{Name: "S", Rows: "3", Seats: "4", Prices: "A-C Std 10"}
	for _, tc := range []struct {
		name  string
		form  catalog.SectionForm
		field string // "" for valid
		seats int
	}{
		{"count", good, "", 12},
		{"range", with(good, func(f *catalog.SectionForm) { f.Rows = "c-e"; f.Prices = "C-E Std 10" }), "", 12},
		{"labels and counts", with(good, func(f *catalog.SectionForm) {
			f.Rows = "A, B, AA"
			f.Seats = "1 2 3"
			f.Prices = "A Std 1\nB-AA Cheap 0.5"
		}), "", 6},
		{"numbered rows", with(good, func(f *catalog.SectionForm) { f.Rows = "1-3"; f.Prices = "1-3 Std 10" }), "", 12},
		{"no rows", with(good, func(f *catalog.SectionForm) { f.Rows = "" }), "sections[0].rows", 0},
		{"too many rows", with(good, func(f *catalog.SectionForm) { f.Rows = "500" }), "sections[0].rows", 0},
		{"counts mismatch", with(good, func(f *catalog.SectionForm) { f.Seats = "1, 2" }), "sections[0].seats", 0},
		{"zero seats", with(good, func(f *catalog.SectionForm) { f.Seats = "0" }), "sections[0].seats", 0},
		{"seats not a number", with(good, func(f *catalog.SectionForm) { f.Seats = "many" }), "sections[0].seats", 0},
		{"row without price", with(good, func(f *catalog.SectionForm) { f.Prices = "A-B Std 10" }), "sections[0].prices", 0},
		{"row priced twice", with(good, func(f *catalog.SectionForm) { f.Prices = "A-B Std 10\nB-C Std 5" }), "sections[0].prices", 0},
		{"bad price", with(good, func(f *catalog.SectionForm) { f.Prices = "A-C Std ten" }), "sections[0].prices", 0},
		{"negative price", with(good, func(f *catalog.SectionForm) { f.Prices = "A-C Std -1" }), "sections[0].prices", 0},
		{"three decimals", with(good, func(f *catalog.SectionForm) { f.Prices = "A-C Std 1.005" }), "sections[0].prices", 0},
		{"accessible outside", with(good, func(f *catalog.SectionForm) { f.Accessible = "C9" }), "sections[0].accessible", 0},
		{"companion unknown row", with(good, func(f *catalog.SectionForm) { f.Companion = "Z1" }), "sections[0].companion", 0},
		{"both", with(good, func(f *catalog.SectionForm) { f.Accessible = "A1"; f.Companion = "A1" }), "sections[0].companion", 0},
		{"control character", with(good, func(f *catalog.SectionForm) { f.Name = "S\x00" }), "sections[0].name", 0},
	} {
		l, err := catalog.LayoutForm{Sections: []catalog.SectionForm{tc.form}}.Parse()
		var inv *catalog.InvalidError
		switch {
		case tc.field == "" && err != nil:
			t.Errorf("%s: got %v, want valid", tc.name, err)
		case tc.field == "" && l.SeatCount() != tc.seats:
			t.Errorf("%s: got %d seats, want %d", tc.name, l.SeatCount(), tc.seats)
		case tc.field != "" && (!errors.As(err, &inv) || inv.Field != tc.field):
			t.Errorf("%s: got %v, want an error about %s", tc.name, err, tc.field)
		}
	}
	// Written back as a form and read again, a layout is the same.
	l, err := hall().Layout.Form(money.Shop{}).Parse()
	if err != nil || l.SeatCount() != 64 || l.Capacity() != 120 {
		t.Errorf("round trip: got %d seats, %d standing, err %v; want 64, 120", l.SeatCount(), l.Capacity(), err)
	}
	// Prices as the organiser writes them: a decimal comma, the symbol after, and a
	// German editor's own text read back.
	de, err := money.New("de")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		shop   money.Shop
		prices string
		want   int
	}{
		{money.Shop{}, "A-C Std 40,50", 4050},
		{money.Shop{}, "A-C Std 40.50", 4050},
		{money.Shop{}, "A-C Std €40.50", 4050},
		{money.Shop{}, "A-C Front row 40,50 €", 4050},
		{de, "A-C Std 1.234,5", 123450},
	} {
		l, err := catalog.LayoutForm{Sections: []catalog.SectionForm{with(good, func(f *catalog.SectionForm) { f.Prices = tc.prices })}, Money: tc.shop}.Parse()
		if err != nil || l.Sections[0].Prices[0].PriceCents != tc.want {
			t.Fatalf("prices %q: got %v, %v; want %d cents", tc.prices, l.Sections, err, tc.want)
		}
		back := l.Form(tc.shop)
		if l2, err := back.Parse(); err != nil || l2.Sections[0].Prices[0].PriceCents != tc.want {
			t.Errorf("prices %q written back as %q: got %v, want %d cents", tc.prices, back.Sections[0].Prices, err, tc.want)
		}
	}
	if _, err := (catalog.LayoutForm{Sections: []catalog.SectionForm{with(good, func(f *catalog.SectionForm) { f.Prices = "A-C Std 40,5,0" })}}).Parse(); err == nil {
		t.Error(`prices "40,5,0": got no error`)
	}
	// Two sections of one name, and a layout with nothing in it.
	if _, err := (catalog.LayoutForm{Sections: []catalog.SectionForm{good, good}}).Parse(); err == nil {
		t.Error("two sections named S: got no error")
	}
	if _, err := (catalog.LayoutForm{}).Parse(); err == nil {
		t.Error("empty layout: got no error")
	}
}

func with(f catalog.SectionForm, change func(*catalog.SectionForm)) catalog.SectionForm {
	change(&f)
	return f
}

// TestSetPublished: withdrawing and publishing again flips the flag and records both.
func TestSetPublished(t *testing.T) {
	t.Parallel()
	pool := dbtest.Pool(t)
	ctx := t.Context()
	c := catalog.New(pool)
	ev, err := c.CreateVenueEvent(ctx, catalog.Actor{}, hall(), eventAt(0, "pub"))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.SetPublished(ctx, catalog.Actor{}, ev, false); err != nil {
		t.Fatal(err)
	}
	if e, err := c.Event(ctx, ev); err != nil || e.Published {
		t.Fatalf("after unpublish: got published=%v, err %v", e.Published, err)
	}
	if err := c.SetPublished(ctx, catalog.Actor{}, ev+100, false); !errors.Is(err, catalog.ErrEventNotFound) {
		t.Errorf("unknown event: got %v, want ErrEventNotFound", err)
	}
	if got := count(t, pool, `SELECT count(*) FROM audit_log WHERE action = 'event.unpublish' AND before->>'published' = 'true' AND after->>'published' = 'false'`); got != 1 {
		t.Errorf("got %d unpublish audit entries with before and after, want 1", got)
	}
}
