package catalog

import (
	"fmt"
	"strings"
)

// Layout is a venue's seating plan as staff enter it: sections of rows, and
// general-admission areas. Seats generates the seats and their map positions from it.
type Layout struct {
	Sections []Section `json:"sections"`
	GA       []GAArea  `json:"ga,omitempty"`
}

// Section is a block of rows entered in bulk.
type Section struct {
	Name string `json:"name"`
	// Rows are the rows' labels, front to back.
	Rows []string `json:"rows"`
	// Seats is each row's seat count, one per row; seats are numbered from 1.
	Seats []int `json:"seats"`
	// Curved rows bow around the stage; straight ones do not.
	Curved bool `json:"curved"`
	// Prices price the rows from FromRow (an index into Rows) on, until the next one;
	// ascending, the first from row 0.
	Prices     []RowPrice `json:"prices"`
	Accessible []SeatRef  `json:"accessible,omitempty"` // wheelchair spaces
	Companion  []SeatRef  `json:"companion,omitempty"`  // seats for a wheelchair user's companion
}

// RowPrice prices the rows of a section from FromRow (0-based) on.
type RowPrice struct {
	FromRow    int    `json:"fromRow"`
	Tier       string `json:"tier"`
	PriceCents int    `json:"priceCents"`
}

// SeatRef names one seat of a section.
type SeatRef struct {
	Row    string `json:"row"`
	Number int    `json:"number"`
}

func (r SeatRef) String() string { return fmt.Sprintf("%s%d", r.Row, r.Number) }

// GAArea is a general-admission area: a number of places at one price.
type GAArea struct {
	Name       string `json:"name"`
	PriceCents int    `json:"priceCents"`
	Capacity   int    `json:"capacity"`
	// Stripes spread the places over rows so that one row is not every buyer's hot
	// spot; zero: chosen from the capacity.
	Stripes int `json:"stripes,omitempty"`
}

// Limits of a layout: generous for the largest stadium (and the hold benchmark's
// 250,000-seat walk), small enough that a typo cannot make a million seats.
const (
	MaxSections    = 100
	MaxRows        = 200
	MaxSeatsPerRow = 200
	MaxSeats       = 250_000
	MaxGAAreas     = 20
	MaxGACapacity  = 200_000
	MaxPriceCents  = 10_000_00
	maxNameLen     = 100
)

// Seat is one generated seat of a layout, with its place on the map.
type Seat struct {
	Section    string
	Row        string
	Number     int
	Tier       string
	PriceCents int
	Rank       int // lower is better within a price: best available's order
	X, Y       int
	Accessible bool
	Companion  bool
}

// InvalidError is input that cannot make a venue or an event: which field, and why,
// in words for the member who typed it.
type InvalidError struct {
	Field   string
	Message string
}

func (e *InvalidError) Error() string { return e.Field + ": " + e.Message }

func invalid(field, format string, args ...any) error {
	return &InvalidError{Field: field, Message: fmt.Sprintf(format, args...)}
}

// Validate checks the layout without generating it.
func (l Layout) Validate() error {
	_, err := l.Seats()
	return err
}

// SeatCount is how many seats the layout has (valid or not).
func (l Layout) SeatCount() int {
	n := 0
	for _, s := range l.Sections {
		for _, c := range s.Seats {
			n += c
		}
	}
	return n
}

// Capacity is how many standing places the layout has.
func (l Layout) Capacity() int {
	n := 0
	for _, g := range l.GA {
		n += g.Capacity
	}
	return n
}

// Seats validates the layout and generates its seats, section by section, row by row,
// seat by seat: the order that gives an event's seats their ids.
func (l Layout) Seats() ([]Seat, error) {
	if len(l.Sections) == 0 && len(l.GA) == 0 {
		return nil, invalid("sections", "add a section of seats or a standing area")
	}
	if len(l.Sections) > MaxSections {
		return nil, invalid("sections", "at most %d sections", MaxSections)
	}
	if n := l.SeatCount(); n > MaxSeats {
		return nil, invalid("sections", "%d seats is more than the %d a venue may have", n, MaxSeats)
	}
	names := map[string]bool{}
	for i, s := range l.Sections {
		field := fmt.Sprintf("sections[%d]", i)
		if err := checkUniqueName(names, field+".name", "section", s.Name); err != nil {
			return nil, err
		}
		if err := s.validate(field); err != nil {
			return nil, err
		}
	}
	gaNames := map[string]bool{}
	if len(l.GA) > MaxGAAreas {
		return nil, invalid("ga", "at most %d standing areas", MaxGAAreas)
	}
	for i, g := range l.GA {
		field := fmt.Sprintf("ga[%d]", i)
		if err := checkUniqueName(gaNames, field+".name", "standing area", g.Name); err != nil {
			return nil, err
		}
		if g.Capacity < 1 || g.Capacity > MaxGACapacity {
			return nil, invalid(field+".capacity", "%s: capacity must be between 1 and %d", g.Name, MaxGACapacity)
		}
		if g.PriceCents < 0 || g.PriceCents > MaxPriceCents {
			return nil, invalid(field+".price", "%s: price must be between 0 and %d.00", g.Name, MaxPriceCents/100)
		}
		if g.Stripes < 0 || g.Stripes > 64 {
			return nil, invalid(field+".stripes", "%s: stripes must be between 1 and 64", g.Name)
		}
	}

	origins := place(l.Sections)
	seats := make([]Seat, 0, l.SeatCount())
	for si, s := range l.Sections {
		acc, comp := refSet(s.Accessible), refSet(s.Companion)
		width := s.widest()
		for r, label := range s.Rows {
			price := s.Prices[0]
			for _, p := range s.Prices {
				if r >= p.FromRow {
					price = p
				}
			}
			n := s.Seats[r]
			for k := 1; k <= n; k++ {
				centre := 2*k - n - 1 // twice the distance from the row's middle
				x, y := seatPosition(origins[si], s.Curved, width, n, r, k)
				ref := SeatRef{label, k}
				seats = append(seats, Seat{
					Section: s.Name, Row: label, Number: k, Tier: price.Tier, PriceCents: price.PriceCents,
					Rank: r*1000 + abs(centre), X: x, Y: y, Accessible: acc[ref], Companion: comp[ref],
				})
			}
		}
	}
	return seats, nil
}

func (s Section) validate(field string) error {
	if len(s.Rows) == 0 {
		return invalid(field+".rows", "%s: give at least one row", s.Name)
	}
	if len(s.Rows) > MaxRows {
		return invalid(field+".rows", "%s: at most %d rows", s.Name, MaxRows)
	}
	if len(s.Seats) != len(s.Rows) {
		return invalid(field+".seats", "%s: %d rows but %d seat counts; give one count for every row, or one for all", s.Name, len(s.Rows), len(s.Seats))
	}
	rows := map[string]int{}
	for i, r := range s.Rows {
		if r == "" || len(r) > 8 || strings.ContainsAny(r, " \t\r\n,") {
			return invalid(field+".rows", "%s: row label %q must be 1 to 8 characters without spaces or commas", s.Name, r)
		}
		if _, dup := rows[r]; dup {
			return invalid(field+".rows", "%s: row %s appears twice", s.Name, r)
		}
		rows[r] = i
		if c := s.Seats[i]; c < 1 || c > MaxSeatsPerRow {
			return invalid(field+".seats", "%s: row %s must have between 1 and %d seats", s.Name, r, MaxSeatsPerRow)
		}
	}
	if len(s.Prices) == 0 || s.Prices[0].FromRow != 0 {
		return invalid(field+".prices", "%s: the first row needs a price", s.Name)
	}
	for i, p := range s.Prices {
		if i > 0 && p.FromRow <= s.Prices[i-1].FromRow {
			return invalid(field+".prices", "%s: price ranges overlap or are out of order", s.Name)
		}
		if p.FromRow >= len(s.Rows) {
			return invalid(field+".prices", "%s: a price starts after the last row", s.Name)
		}
		if err := checkName(field+".prices", "price tier", p.Tier); err != nil {
			return err
		}
		if p.PriceCents < 0 || p.PriceCents > MaxPriceCents {
			return invalid(field+".prices", "%s: price must be between 0 and %d.00", s.Name, MaxPriceCents/100)
		}
	}
	for _, list := range []struct {
		what string
		refs []SeatRef
	}{{"accessible", s.Accessible}, {"companion", s.Companion}} {
		for _, ref := range list.refs {
			r, ok := rows[ref.Row]
			if !ok || ref.Number < 1 || ref.Number > s.Seats[r] {
				return invalid(field+"."+list.what, "%s: %s seat %s is not in the section", s.Name, list.what, ref)
			}
		}
	}
	acc := refSet(s.Accessible)
	for _, ref := range s.Companion {
		if acc[ref] {
			return invalid(field+".companion", "%s: seat %s cannot be both a wheelchair space and a companion seat", s.Name, ref)
		}
	}
	return nil
}

// checkName accepts a name of 1 to maxNameLen characters, without control characters.
func checkName(field, what, name string) error {
	if strings.TrimSpace(name) == "" {
		return invalid(field, "give the %s a name", what)
	}
	if len([]rune(name)) > maxNameLen {
		return invalid(field, "the %s's name is longer than %d characters", what, maxNameLen)
	}
	if strings.ContainsFunc(name, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return invalid(field, "the %s's name contains control characters", what)
	}
	return nil
}

// checkUniqueName checks a name as checkName does, and that none of the names seen
// before it is the same; it adds the name to seen.
func checkUniqueName(seen map[string]bool, field, what, name string) error {
	if err := checkName(field, what, name); err != nil {
		return err
	}
	if seen[name] {
		return invalid(field, "two %ss are called %q", what, name)
	}
	seen[name] = true
	return nil
}

func (s Section) widest() int {
	w := 0
	for _, n := range s.Seats {
		w = max(w, n)
	}
	return w
}

func refSet(refs []SeatRef) map[SeatRef]bool {
	m := make(map[SeatRef]bool, len(refs))
	for _, r := range refs {
		m[r] = true
	}
	return m
}

// Seat pitch in map units: seats sit seatPitchX apart in a row and rows rowPitch apart;
// the seat map draws a seat about ten units wide.
const (
	seatPitchX = 12
	rowPitch   = 14
	rowCurve   = 6  // how much higher a curved row's ends sit than its middle
	stageRoom  = 40 // above the first row, where the map draws the stage
)

type point struct{ x, y int }

// place sets each section's top-left corner. Up to three sections stack under the
// stage, each centred, as stalls, circle and balcony are drawn; more are blocks of a
// stadium, set out in a grid so that the overview of a big venue is a picture rather
// than one tall column.
func place(sections []Section) []point {
	out := make([]point, len(sections))
	maxW, maxH := 0, 0
	for _, s := range sections {
		maxW = max(maxW, s.widest()*seatPitchX)
		maxH = max(maxH, len(s.Rows)*rowPitch)
	}
	if len(sections) <= 3 {
		y := stageRoom
		for i, s := range sections {
			out[i] = point{(maxW - s.widest()*seatPitchX) / 2, y}
			y += (len(s.Rows) + 2) * rowPitch
		}
		return out
	}
	cols := 1
	for cols*cols < len(sections) {
		cols++
	}
	cellW, cellH := maxW+4*seatPitchX, maxH+4*rowPitch
	for i, s := range sections {
		col, row := i%cols, i/cols
		out[i] = point{col*cellW + (maxW-s.widest()*seatPitchX)/2, stageRoom + row*cellH}
	}
	return out
}

// seatPosition is the map position of seat k (1-based) of row r (0-based), which has n
// seats, in a section width seats wide whose corner is at o. A shorter row is centred
// in the section. Curved rows bow around the stage: a row's ends sit rowCurve units
// higher than its middle, less than a row's pitch, so rows never cross.
func seatPosition(o point, curved bool, width, n, r, k int) (x, y int) {
	x = o.x + (width-n)*seatPitchX/2 + k*seatPitchX
	y = o.y + r*rowPitch + rowCurve
	if curved {
		c := 2*k - n - 1 // twice the distance from the row's middle
		span := max(1, (n-1)*(n-1))
		y -= rowCurve * c * c / span
	}
	return x, y
}

// RowLabel names the i-th row (0-based) A..Z, then AA, AB, ...
func RowLabel(i int) string {
	if i < 26 {
		return string(rune('A' + i))
	}
	return RowLabel(i/26-1) + string(rune('A'+i%26))
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// stripesFor spreads a standing area over a stripe per 50 places, up to 16.
func stripesFor(capacity int) int {
	return min(16, max(1, capacity/50))
}
