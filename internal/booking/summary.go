package booking

import (
	"cmp"
	"slices"
)

// What the pages show about a seat map is derived here from the cached SeatMap, never
// read per viewer from the database: a big venue's full map costs tens of milliseconds
// of database time, its summary a pass over memory.

// SectionSummary is one section of a seat map in numbers: the event page lists it, and
// the overview of a big venue draws it at its place (the bounding box of its seats).
type SectionSummary struct {
	Name          string
	Seats         int
	Available     int
	Held          int
	Sold          int
	Accessible    int // accessible seats still available
	MinPriceCents int
	MaxPriceCents int
	MinX, MinY    int
	MaxX, MaxY    int
}

// PriceLevel is one seat price of the event and how many seats at it are available: the
// price list of the event page and the legend of the seat map.
type PriceLevel struct {
	PriceCents int
	Seats      int
	Available  int
}

// MapSummary is a seat map in numbers.
type MapSummary struct {
	Seats     int
	Available int
	// Sections in layout order (top to bottom, then left to right), the order in which
	// a person reads the venue.
	Sections []SectionSummary
	// Prices dearest first.
	Prices []PriceLevel
}

// Section returns the summary of one section, if the map has it.
func (s MapSummary) Section(name string) (SectionSummary, bool) {
	for _, sec := range s.Sections {
		if sec.Name == name {
			return sec, true
		}
	}
	return SectionSummary{}, false
}

// Summarize counts a seat map by section and by price.
func Summarize(m SeatMap) MapSummary {
	var out MapSummary
	bySection := map[string]int{}
	byPrice := map[int]int{}
	// The map comes ordered by section and row, so a seat is nearly always of the
	// section and price of the one before: remembering those spares the lookups.
	i, lastSection := -1, ""
	j, lastPrice := -1, -1
	for _, st := range m.Seats {
		if i < 0 || st.Section != lastSection {
			var ok bool
			if i, ok = bySection[st.Section]; !ok {
				i = len(out.Sections)
				bySection[st.Section] = i
				out.Sections = append(out.Sections, SectionSummary{
					Name: st.Section, MinPriceCents: st.PriceCents, MaxPriceCents: st.PriceCents,
					MinX: st.X, MinY: st.Y, MaxX: st.X, MaxY: st.Y,
				})
			}
			lastSection = st.Section
		}
		sec := &out.Sections[i]
		sec.Seats++
		sec.MinPriceCents = min(sec.MinPriceCents, st.PriceCents)
		sec.MaxPriceCents = max(sec.MaxPriceCents, st.PriceCents)
		sec.MinX, sec.MinY = min(sec.MinX, st.X), min(sec.MinY, st.Y)
		sec.MaxX, sec.MaxY = max(sec.MaxX, st.X), max(sec.MaxY, st.Y)

		if j < 0 || st.PriceCents != lastPrice {
			var ok bool
			if j, ok = byPrice[st.PriceCents]; !ok {
				j = len(out.Prices)
				byPrice[st.PriceCents] = j
				out.Prices = append(out.Prices, PriceLevel{PriceCents: st.PriceCents})
			}
			lastPrice = st.PriceCents
		}
		out.Prices[j].Seats++

		out.Seats++
		switch st.Status {
		case SeatAvailable:
			sec.Available++
			out.Prices[j].Available++
			out.Available++
			if st.Accessible {
				sec.Accessible++
			}
		case SeatHeld:
			sec.Held++
		case SeatSold:
			sec.Sold++
		}
	}
	slices.SortStableFunc(out.Sections, func(a, b SectionSummary) int {
		return cmp.Or(cmp.Compare(a.MinY, b.MinY), cmp.Compare(a.MinX, b.MinX), cmp.Compare(a.Name, b.Name))
	})
	slices.SortFunc(out.Prices, func(a, b PriceLevel) int { return cmp.Compare(b.PriceCents, a.PriceCents) })
	return out
}

// SeatsInOrder returns the seats of one section (all seats when section is empty) in
// reading order: sections as Summarize orders them, rows A to Z then AA, AB and on,
// seats by number. The database orders row labels as text (AA before B), which is not
// the order of the rows in the hall, nor the order a keyboard should walk them.
func SeatsInOrder(m SeatMap, sum MapSummary, section string) []MapSeat {
	rank := make(map[string]int, len(sum.Sections))
	for i, sec := range sum.Sections {
		rank[sec.Name] = i
	}
	type ranked struct {
		rank int
		seat MapSeat
	}
	var sel []ranked
	r, last := 0, ""
	for _, st := range m.Seats {
		if section == "" || st.Section == section {
			if st.Section != last {
				r, last = rank[st.Section], st.Section
			}
			sel = append(sel, ranked{r, st})
		}
	}
	slices.SortFunc(sel, func(a, b ranked) int {
		return cmp.Or(cmp.Compare(a.rank, b.rank), CompareRows(a.seat.Row, b.seat.Row), cmp.Compare(a.seat.Number, b.seat.Number))
	})
	out := make([]MapSeat, len(sel))
	for i, s := range sel {
		out[i] = s.seat
	}
	return out
}

// CompareRows orders row labels as the rows stand: A..Z, then AA, AB, ...
func CompareRows(a, b string) int {
	return cmp.Or(cmp.Compare(len(a), len(b)), cmp.Compare(a, b))
}

// SeatsByID returns the map's seats with these ids, in the map's order; ids the map
// does not have are left out. One pass over the map: the live stream asks for a few
// seats at a time.
func SeatsByID(m SeatMap, ids []int64) []MapSeat {
	if len(ids) == 0 {
		return nil
	}
	want := make(map[int64]struct{}, len(ids))
	for _, id := range ids {
		want[id] = struct{}{}
	}
	out := make([]MapSeat, 0, len(ids))
	for _, st := range m.Seats {
		if _, ok := want[st.ID]; ok {
			out = append(out, st)
			if len(out) == len(want) {
				break
			}
		}
	}
	return out
}
