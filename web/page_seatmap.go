package web

import (
	"fmt"
	"strconv"
	"strings"

	"boxoffice/internal/booking"
	"boxoffice/internal/money"
	"boxoffice/internal/ordertext"
	"boxoffice/views"
)

// The seat map's geometry is the seats' own x, y (map units); these are the choices
// of how to draw it.
const (
	// overviewMin: a venue with more seats shows its sections first, then one
	// section's seats. Two thousand seats is about what a phone can draw and a person
	// can scan; a 50,000-seat stadium drawn whole would be megabytes.
	overviewMin = 2000
	// unitPx is the map's natural scale, in CSS pixels per map unit: seats are 12 units
	// apart, so 24 px on a phone, a comfortable tap. Wide screens scale the map down
	// to fit; phones scroll it sideways.
	unitPx = 2
	// overviewWidth is the overview's natural width in CSS pixels; it scales to fit.
	overviewWidth = 960
	// railUnits is the width of the row letters' strip in map units: a letter or two
	// at the map's 8-unit type, with room before the first seat.
	railUnits = 20
	// priceColours is how many distinct price colours app.css defines (.pr0 …).
	priceColours = 8
)

// stateMine is a seat held by the viewing buyer: a state of the page, not of the map.
const stateMine = "mine"

// stateStaff prefixes the kind of a staff hold ("staff:house"): a state of the staff
// map only, where a seat held by staff is told from one a buyer holds.
const stateStaff = "staff:"

// seatStyle is what drawing a seat needs beyond the seat itself.
type seatStyle struct {
	mine   map[int64]bool   // the viewer's held seats
	staff  map[int64]string // on the staff map: seats of staff holds, by kind
	picked map[int64]bool   // the seats best available just found (page_best.go)
	// prices are the event's first prices the seats' labels say; zero: the seats'
	// own prices (the staff map, whose desk quotes its own methods).
	prices booking.AllInPrices
	// money writes the prices: the shop's format (SHOP_LOCALE).
	money money.Shop
}

// state is the seat's state as this viewer sees it. The buyer's own holds come from a
// fresh read and win over the map, which may be a moment behind.
func (st seatStyle) state(s booking.MapSeat) string {
	if st.mine[s.ID] {
		return stateMine
	}
	if kind := st.staff[s.ID]; kind != "" {
		return stateStaff + kind
	}
	return s.Status
}

// seatView draws one seat in a state. Its element id never changes, so the live
// stream and hold answers can replace it out of band.
func seatView(s booking.MapSeat, state string, style seatStyle) views.SeatView {
	v := views.SeatView{
		DOMID:      seatDOMID(s.ID),
		Transform:  "translate(" + strconv.Itoa(s.X) + " " + strconv.Itoa(s.Y) + ")",
		Accessible: s.Accessible,
	}
	word := state
	if kind, ok := strings.CutPrefix(state, stateStaff); ok {
		v.Shape, v.Class = "held", "seat held staff"
		v.Label = seatName(s, style) + ", " + kind + " hold"
		return v
	}
	switch state {
	case booking.SeatAvailable:
		v.Shape, v.Class, v.Value = "available", "seat avail", strconv.FormatInt(s.ID, 10)
	case booking.SeatSold:
		v.Shape, v.Class = "sold", "seat sold"
	case stateMine:
		v.Shape, v.Class, word = "mine", "seat mine", "held by you"
		v.Value = strconv.FormatInt(s.ID, 10)
	default:
		v.Shape, v.Class, word = "held", "seat held", booking.SeatHeld
	}
	v.Label = seatName(s, style) + ", " + word
	return v
}

func seatDOMID(id int64) string { return "seat-" + strconv.FormatInt(id, 10) }

// seatName is how a seat is read out: "Stalls, row F, seat 12, €47 incl. fees", and
// whether it is a wheelchair space. The price is the one the map's key gives the seat's
// price (seatPriceText).
func seatName(s booking.MapSeat, style seatStyle) string {
	n := booking.SeatName(s.Section, s.Row, s.Number) + ", " + seatPriceText(style.money, s.PriceCents, style.prices)
	if s.Accessible {
		n += ", wheelchair space"
	}
	return n
}

// shortSeat is a seat as a message names it: "F12 (Stalls)".
func shortSeat(s booking.MapSeat) string {
	return s.Row + strconv.Itoa(s.Number) + " (" + s.Section + ")"
}

// priceClasses colours prices, dearest first, as the legend lists them.
func priceClasses(sum booking.MapSummary) map[int]string {
	out := make(map[int]string, len(sum.Prices))
	for i, p := range sum.Prices {
		out[p.PriceCents] = "pr" + strconv.Itoa(i%priceColours)
	}
	return out
}

// mapArgs is what seatMapView draws from.
type mapArgs struct {
	ev      booking.Event
	m       booking.SeatMap
	sum     booking.MapSummary
	section string // one section, or "" for the venue
	style   seatStyle
	csrf    string
	// staff draws the box office's map: ticking picks seats for the forms beside it,
	// and its links stay on the staff page.
	staff *staffMap
}

// staffMap is where the staff map's links and form go.
type staffMap struct {
	pageURL    func(section string) string
	formAction string
}

// url is the map's page for a section ("" for the venue).
func (a mapArgs) url(section string) string {
	if a.staff != nil {
		return a.staff.pageURL(section)
	}
	return seatsURL(a.ev, section)
}

// seatMapView builds the map part of the seat page: the overview of a big venue, or
// the seats of the venue or of one section.
func seatMapView(a mapArgs) views.SeatMap {
	v := views.SeatMap{
		FragmentURL: a.url(a.section), FormAction: holdsURL(a.ev),
		CSRF: a.csrf, View: a.section,
	}
	if a.staff != nil {
		v.FormAction, v.Pick = a.staff.formAction, true
	}
	big := a.sum.Seats > overviewMin
	if big {
		for _, sec := range a.sum.Sections {
			v.Nav = append(v.Nav, views.SectionLink{
				Name: sec.Name, URL: a.url(sec.Name), Left: leftText(sec.Available), Current: sec.Name == a.section,
			})
		}
	}
	switch {
	case big && a.section == "":
		overview(&v, a)
	case a.section != "":
		sec, _ := a.sum.Section(a.section)
		v.Heading = "Section " + sec.Name
		v.Summary = fmt.Sprintf("%s of %s seats left in this section.", ordertext.Thousands(sec.Available), ordertext.Thousands(sec.Seats))
		if len(a.sum.Sections) > 1 {
			v.BackURL = a.url("")
		}
		seatRows(&v, a)
	default:
		v.Heading = "Seat map"
		v.Summary = fmt.Sprintf("%s of %s seats left.", ordertext.Thousands(a.sum.Available), ordertext.Thousands(a.sum.Seats))
		seatRows(&v, a)
	}
	return v
}

// overview draws one shape per section at the place of its seats, coloured and
// patterned by how much of it is left, each a link to its seats.
func overview(v *views.SeatMap, a mapArgs) {
	v.Overview = true
	v.Heading = "Sections"
	v.Summary = fmt.Sprintf("%s of %s seats left in %d sections.", ordertext.Thousands(a.sum.Available), ordertext.Thousands(a.sum.Seats), len(a.sum.Sections))
	if len(a.sum.Sections) == 0 {
		return
	}
	const pad, stageH, stageGap = 40, 80, 60
	minX, minY, maxX, maxY := bounds(a.sum.Sections)
	for _, sec := range a.sum.Sections {
		pct := 0
		if sec.Seats > 0 {
			pct = sec.Available * 100 / sec.Seats
		}
		x, y := sec.MinX-pad/2, sec.MinY-pad/2
		w, h := sec.MaxX-sec.MinX+pad, sec.MaxY-sec.MinY+pad
		v.Sections = append(v.Sections, views.SectionShape{
			Name: sec.Name, URL: a.url(sec.Name),
			Label: fmt.Sprintf("Section %s: %s of %s seats left (%d%%), %s", sec.Name,
				ordertext.Thousands(sec.Available), ordertext.Thousands(sec.Seats), pct, priceRange(a.style.money, sec.MinPriceCents, sec.MaxPriceCents)),
			Class: availabilityBand(sec.Available, sec.Seats),
			X:     x, Y: y, W: w, H: h, TextX: x + w/2, TextY: y + h/2 - 20,
			Left: fmt.Sprintf("%s left · %d%%", ordertext.Thousands(sec.Available), pct),
		})
	}
	top := minY - pad - stageGap - stageH
	v.Stage = &views.Shape{X: minX, Y: top, W: maxX - minX, H: stageH, TextX: (minX + maxX) / 2, TextY: top + stageH*2/3, Text: "Stage"}
	x0, y0 := minX-pad, top-pad
	w, h := maxX-minX+3*pad, maxY-top+2*pad
	v.ViewBox = fmt.Sprintf("%d %d %d %d", x0, y0, w, h)
	v.Width, v.Height = overviewWidth, overviewWidth*h/max(w, 1)
}

// availabilityBand names how much of a section is left, in quarters; CSS gives each
// band a colour, and the sold-out band a pattern too.
func availabilityBand(available, seats int) string {
	switch {
	case available == 0 || seats == 0:
		return "band-0"
	case available*4 < seats:
		return "band-1"
	case available*2 < seats:
		return "band-2"
	case available*4 < seats*3:
		return "band-3"
	}
	return "band-4"
}

func bounds(secs []booking.SectionSummary) (minX, minY, maxX, maxY int) {
	minX, minY, maxX, maxY = secs[0].MinX, secs[0].MinY, secs[0].MaxX, secs[0].MaxY
	for _, s := range secs[1:] {
		minX, minY = min(minX, s.MinX), min(minY, s.MinY)
		maxX, maxY = max(maxX, s.MaxX), max(maxY, s.MaxY)
	}
	return
}

// seatRows draws seats row by row in reading order, each row's label at its left, the
// stage above a whole venue and each section's name above it.
func seatRows(v *views.SeatMap, a mapArgs) {
	seats := booking.SeatsInOrder(a.m, a.sum, a.section)
	if len(seats) == 0 {
		v.ViewBox, v.Width, v.Height = "0 0 100 20", 100*unitPx, 20*unitPx
		return
	}
	colour := priceClasses(a.sum)
	minX, minY, maxX, maxY := seats[0].X, seats[0].Y, seats[0].X, seats[0].Y
	var row *views.RowView
	var rowKey string
	for _, s := range seats {
		minX, minY = min(minX, s.X), min(minY, s.Y)
		maxX, maxY = max(maxX, s.X), max(maxY, s.Y)
		if key := s.Section + "\x00" + s.Row; row == nil || key != rowKey {
			v.Rows = append(v.Rows, views.RowView{Section: s.Section, Label: s.Row, LabelX: s.X - 14, LabelY: s.Y + 3})
			row, rowKey = &v.Rows[len(v.Rows)-1], key
		}
		class := colour[s.PriceCents]
		if n := len(row.Groups); n == 0 || row.Groups[n-1].Class != class {
			row.Groups = append(row.Groups, views.PriceGroup{Class: class})
		}
		g := &row.Groups[len(row.Groups)-1]
		g.Seats = append(g.Seats, seatView(s, a.style.state(s), a.style))
	}
	top := minY - 8
	if a.section == "" {
		for _, sec := range a.sum.Sections {
			v.Captions = append(v.Captions, views.Caption{X: (sec.MinX + sec.MaxX) / 2, Y: sec.MinY - 10, Text: sec.Name, Section: sec.Name})
		}
		top = minY - 20
		if len(a.sum.Sections) <= 3 {
			// The stage of a small venue sits above its first section.
			top = minY - 44
			v.Stage = &views.Shape{X: minX, Y: top, W: maxX - minX, H: 16, TextX: (minX + maxX) / 2, TextY: top + 12, Text: "Stage"}
		}
	}
	var w, h int
	v.ViewBox, v.RailViewBox, w, h = seatsBox(minX, top, maxX, maxY)
	v.Width, v.Height = w*unitPx, h*unitPx
	v.RailWidth, v.RailLabelX = railUnits*unitPx, railUnits-6
	if a.section == "" && len(a.sum.Sections) > 1 && a.staff == nil {
		v.Choices = sectionChoices(a)
	}
}

// seatsBox frames seats spanning minX…maxX and top…maxY (top leaves room above the
// first row): room for the row letters at the left, half a seat at the other edges.
// It returns the map's viewBox, the row letters' strip's, and the map's size in units.
func seatsBox(minX, top, maxX, maxY int) (viewBox, railBox string, w, h int) {
	x0, y0 := minX-26, top-6
	w, h = maxX+10-x0, maxY+10-y0
	return fmt.Sprintf("%d %d %d %d", x0, y0, w, h), fmt.Sprintf("0 %d %d %d", y0, railUnits, h), w, h
}

// sectionChoices lists the sections of a map drawn whole, each framed as its own
// section page frames it (seatRows with a section: no caption above).
func sectionChoices(a mapArgs) []views.SectionChoice {
	out := make([]views.SectionChoice, 0, len(a.sum.Sections))
	for _, sec := range a.sum.Sections {
		box, rail, _, _ := seatsBox(sec.MinX, sec.MinY-8, sec.MaxX, sec.MaxY)
		out = append(out, views.SectionChoice{
			Name: sec.Name, URL: a.url(sec.Name), Seats: sec.Seats,
			Left:    sectionLeft(sec.Available, sec.Seats),
			Prices:  priceRange(a.style.money, sec.MinPriceCents, sec.MaxPriceCents),
			ViewBox: box, RailBox: rail,
		})
	}
	return out
}

// sectionLeft is a section's seats left in words; sections.js writes the same words.
func sectionLeft(available, seats int) string {
	if available <= 0 {
		return "sold out"
	}
	return fmt.Sprintf("%s of %s seats left", ordertext.Thousands(available), ordertext.Thousands(seats))
}

// seatsOfMap draws the given seats of the map for out-of-band swaps. The map may be a
// moment behind the database, so known, the database's word wins: a seat it just
// refused shows held rather than available (known = SeatHeld), a seat just released
// shows available rather than held (known = SeatAvailable). Sold stays sold.
func seatsOfMap(m booking.SeatMap, ids []int64, known string, style seatStyle) []views.SeatView {
	seats := booking.SeatsByID(m, ids)
	out := make([]views.SeatView, len(seats))
	for i, s := range seats {
		state := style.state(s)
		switch {
		case known == booking.SeatHeld && state == booking.SeatAvailable,
			known == booking.SeatAvailable && state == booking.SeatHeld:
			state = known
		}
		out[i] = seatView(s, state, style)
		if style.picked[s.ID] {
			out[i].Class += " picked"
		}
	}
	return out
}

// mineIDs lists the element ids of the buyer's held seats, for the page's script.
func mineIDs(holds []booking.Hold) (string, map[int64]bool) {
	var ids []string
	mine := map[int64]bool{}
	for _, h := range holds {
		for _, s := range h.Seats {
			ids = append(ids, seatDOMID(s.ID))
			mine[s.ID] = true
		}
	}
	return strings.Join(ids, " "), mine
}
