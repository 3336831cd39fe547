package views

// SeatsPage is one buyer's seat selection page: the map, the ways to ask for seats,
// and the buyer's holds. It is personal (never cached) and carries the CSRF token.
type SeatsPage struct {
	Page
	Event     EventHeader
	StreamURL string // the live stream of seat changes, from the map's version
	PageURL   string // this page: its parts are fetched again from it
	Message   Message
	Holds     HoldPanel
	Best      BestForm
	GA        []GAForm
	Legend    Legend
	Map       SeatMap
	// Proof, if set, asks the browser for a proof of work before the session's first
	// hold (proof.templ).
	Proof *Proof
}

// Message is the one line the seat page says about the buyer's last request: a seat
// just taken, a limit reached. Empty says nothing.
type Message struct {
	Text  string
	Error bool
	// Picked names the element ids of the seats best available just found,
	// space-separated: the page's script scrolls them into view.
	Picked string
}

// HoldPanel is the buyer's live holds on the event.
type HoldPanel struct {
	URL   string // fetched again when a hold runs out
	Holds []HoldView
	// MineIDs are the element ids of the seats in these holds, space-separated: the
	// page's script marks them as the buyer's again after the live stream replaced
	// them with their public state (held).
	MineIDs string
	CSRF    string
}

// HoldView is one hold: what it keeps, until when, and what can be done with it.
type HoldView struct {
	ID          string
	Lines       []HoldLine
	Total       string
	ExpiresAt   string // RFC 3339, for the countdown script
	ExpiresText string // the expiry for people without the script
	CheckoutURL string
	ReleaseURL  string
	// CheckoutBegun: the hold has an order and can no longer change; the basket is
	// the hold without one.
	CheckoutBegun bool
	// Price is what the basket costs, all in; nil when it cannot be priced.
	Price *BasketPrice
	// GATypes counts the standing places per ticket type; nil when the hold has no
	// standing places, they have no choice of type, or the hold can no longer change.
	GATypes *GATypeForm
}

// GATypeForm says how many of a basket's standing places are of each type (a form
// post of type_<id> counts); places not counted take the first type.
type GATypeForm struct {
	URL    string
	What   string // "3 standing places (Standing)"
	Fields []TypeCount
}

// BasketPrice is a basket's quote as the panel shows it: amounts already worded.
type BasketPrice struct {
	Fees     string // every fee, per ticket and per order
	OrderFee string // the per-order fee, part of Fees; empty when none
	Discount string // empty when none
	Tax      string // "incl. €4.19 VAT"
	// VoucherURL takes a voucher code (a form post) while the basket can change.
	VoucherURL     string
	VoucherCode    string
	VoucherProblem string
	// Problems are the rules the basket breaks; checkout is refused while any is.
	Problems []string
}

// HoldLine is one seat or one set of GA places in a hold.
type HoldLine struct {
	What  string
	Price string
	// RemoveURL, when set, takes this line out of the basket (a form post).
	RemoveURL string
	// Type is the line's ticket type; TypeURL, when set, changes it to one of Types
	// (a form post of "type").
	Type    string
	TypeURL string
	Types   []Option
	// Detail says what the price is made of ("incl. €1.75 fees").
	Detail string
}

// BestForm asks for the best N seats, at any price or one, anywhere or in one section.
type BestForm struct {
	Action     string
	CSRF       string
	Quantities []Option
	Prices     []Option // empty when the map has one price
	Sections   []Option
}

// Option is one choice of a <select>.
type Option struct {
	Value    string
	Label    string
	Selected bool
}

// GAForm asks for places of one general-admission tier.
type GAForm struct {
	Action  string
	CSRF    string
	TierID  string
	Name    string
	Price   string
	Left    string
	Max     int // the most one buyer may ask for now; 0 when none are left
	InputID string
	LeftID  string // the element showing Left, refreshed as places go
}

// Legend explains the map: a colour per price and a shape per state.
type Legend struct {
	Prices []LegendPrice
}

// LegendPrice is one price and the class that colours its seats.
type LegendPrice struct {
	Class string
	Price string
}

// SeatMap is the map part of the seat page: the seats of the venue (or of one section
// of a big venue) as SVG, or, for a big venue, an overview of its sections.
type SeatMap struct {
	FragmentURL string // the map alone, fetched again when the live stream says reset
	FormAction  string // where ticked seats are posted
	// Pick makes ticking a choice only, for the staff map: nothing is posted on a
	// tick; the buttons of the forms beside the map post the ticked seats.
	Pick     bool
	CSRF     string
	View     string // the section shown, posted back so the answer returns to it
	Heading  string
	Overview bool
	BackURL  string // from one section to the overview; empty otherwise
	ViewBox  string
	Width    int // natural size in CSS pixels: two per map unit, tappable on a phone
	Height   int
	Stage    *Shape
	Captions []Caption
	Rows     []RowView
	Sections []SectionShape
	Nav      []SectionLink // the other sections of a big venue
	// Choices are the sections of a map drawn whole with more than one section: a
	// phone lists them first and shows one section's seats at a time (sections.js).
	Choices []SectionChoice
	Summary string // e.g. "1,234 of 2,500 seats left"
	// The row letters' strip (rowRail): its viewBox spans the map's height in map
	// units, its width is RailWidth CSS pixels, its letters end at RailLabelX.
	RailViewBox string
	RailWidth   int
	RailLabelX  int
}

// Shape is a labelled rectangle on the map (the stage).
type Shape struct {
	X, Y, W, H   int
	TextX, TextY int
	Text         string
}

// RowView is one row of seats with its label at its left.
type RowView struct {
	Section        string // the row's section, by which a phone shows one at a time
	Label          string
	LabelX, LabelY int
	Groups         []PriceGroup
}

// PriceGroup is a run of seats of one price in a row. The price colour is the group's,
// not the seat's: a seat replaced by the live stream then needs nothing but its own
// state, and the stream need not know the event's price list.
type PriceGroup struct {
	Class string
	Seats []SeatView
}

// Caption is a text on the map, such as a section's name.
type Caption struct {
	X, Y    int
	Text    string
	Section string // the section it names, if any
}

// SeatView is one seat. Its element id stays the same whatever its state, so that the
// live stream can replace it out of band.
type SeatView struct {
	DOMID      string // "seat-<id>"
	Value      string // the checkbox value; empty when the seat cannot be ticked or unticked
	Transform  string // where the seat sits
	Class      string // state and price colour
	Shape      string // "available", "held", "sold" or "mine"
	Label      string // the accessible name, also its tooltip
	Accessible bool
}

// SectionShape is one section of a big venue's overview: its place, its availability,
// and the link to its seats.
type SectionShape struct {
	Name         string
	URL          string
	Label        string // accessible name: section and availability in words
	Class        string // availability band, by colour and pattern
	X, Y, W, H   int
	TextX, TextY int
	Left         string // e.g. "1,234 left · 49%"
}

// SectionLink links to one section of a big venue.
type SectionLink struct {
	Name    string
	URL     string
	Left    string
	Current bool
}

// SectionChoice is one section of a map drawn whole, as a phone lists it: a link to its
// own page (without the script) and, for sections.js, the viewBox of its seats alone
// and of the row letters' strip beside them.
type SectionChoice struct {
	Name    string
	URL     string
	Left    string // e.g. "412 of 800 seats left"; sections.js keeps it current
	Seats   int    // the section's seats, for sections.js's count
	Prices  string // e.g. "€65–€95"
	ViewBox string
	RailBox string
}

// HoldAnswer is what an htmx request of the seat page's forms gets back: the message for
// the message area, and the other parts to replace their counterparts out of band.
type HoldAnswer struct {
	Message Message
	Panel   *HoldPanel // nil leaves the panel as it is
	Seats   []SeatView
	GA      []GAForm // their Left replaces what the page shows
}

// refreshTrigger is when the map fetches itself again. A seat view is kept current
// seat by seat by the stream; it reloads on reset, and when one of the buyer's holds
// ran out (its seats are no longer "yours"; the page's script fires holdexpired). The
// overview shows counts, so it reloads on changes too, at most every two seconds.
func (m SeatMap) refreshTrigger() string {
	if m.Overview {
		return "sse:seats throttle:2s, sse:reset"
	}
	return "sse:reset, holdexpired from:body"
}
