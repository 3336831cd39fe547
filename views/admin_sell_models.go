package views

// StaffSell is the box office's seat map of one event: the same live map as a buyer's,
// where ticking only picks seats, with the sale form and the staff-hold form beside it
// (their fields belong to the map's form, by the form attribute, and each button posts
// the ticked seats to its own address), and the staff holds in force.
type StaffSell struct {
	AdminPage
	Event     EventHeader
	Message   Message
	StreamURL string // the event's live stream, from the map's version
	Map       SeatMap
	Legend    Legend
	Sale      SaleForm
	Hold      StaffHoldForm
	Holds     []StaffHoldView
}

// SaleForm sells the ticked seats at once.
type SaleForm struct {
	Action string // the sell button's formaction
	// Token is this form's own random key: submitted twice, it sells once.
	Token   string
	Name    string
	Email   string
	Methods []Option // cash, card present
	// Selling by number instead of ticking: the best seats (in a section), or
	// standing places of a tier. As typed when the form comes back.
	Quantity   string
	Sections   []Option // empty for a venue of one section
	GATiers    []Option // empty for an event without standing
	GAQuantity string
	// Types are the event's ticket types the window sells, each with how many the
	// buyer wants; tickets not counted take their level's first type. Empty for an
	// event without types.
	Types []TypeCount
}

// TypeCount is one ticket type's count field in a form (the sale form, the basket's
// standing places).
type TypeCount struct {
	InputID, Name string // the field's id and name ("type_12")
	Label         string // the type and its prices, "Child (€12.50)"
	Value         string // as typed
}

// StaffHoldForm keeps the ticked seats off sale.
type StaffHoldForm struct {
	Action    string // the hold button's formaction
	Kinds     []Option
	Reason    string
	ReleaseAt string // as typed: YYYY-MM-DDTHH:MM, on the venue's clocks
	Zone      string // the venue's zone, "Europe/Berlin"
}

// StaffHoldView is one staff hold in force, with its release button.
type StaffHoldView struct {
	Kind       string // "House seats"
	Reason     string
	Seats      string // "Stalls A1, A2"
	Until      string // "until released" or the release time
	By         string // who held them, and when
	ReleaseURL string
	CSRF       string
}

// StaffSale is a box-office sale's printable tickets, one to a sheet, with what was
// sold (not printed).
type StaffSale struct {
	AdminPage
	Number  string // "Order 42"
	Event   OrderEvent
	Lines   []OrderLine
	Total   string
	Paid    string // "Paid in cash at the box office"
	Buyer   string // name and email, as given; may be empty
	SoldBy  string
	Tickets []Ticket
	SellURL string // back to the seat map, to sell more
}
