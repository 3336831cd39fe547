package views

// The view models of the buyer's own pages: checkout, the order and its tickets. Every
// text in them is already worded and formatted for people (money, times, reasons), so
// that the templates only place it.

// OrderEvent is the event a hold or an order is for.
type OrderEvent struct {
	Name  string
	When  string // on the venue's clocks: "Sat 14 Mar 2026, 19:30 CET"
	Venue string
}

// OrderLine is one priced line of a hold or an order: a seat, or a number of
// general-admission places of one tier.
type OrderLine struct {
	Label string // "Stalls, row F, seat 12" or "Standing × 2"
	Price string // "€45.00"
}

// ActionLink is the way onward from a page that cannot go on by itself: back to the
// seat map, or on to pay.
type ActionLink struct {
	Href string
	Text string
}

// Checkout is the checkout page of one live hold: what it holds, what it costs, until
// when, and the email and card form.
type Checkout struct {
	Page
	Action string // where the form posts
	Event  OrderEvent
	Lines  []OrderLine
	Total  string
	// ExpiresAt is the hold's expiry in RFC 3339 for the countdown script, which reads
	// it from the data-expires-at attribute; ExpiresText says the same to people without
	// JavaScript.
	ExpiresAt   string
	ExpiresText string
	Email       string // as typed, when the form comes back with a message
	// Message says why the form came back (declined card, invalid email); empty on
	// first view. EmailInvalid and CardInvalid mark the field it is about.
	Message      string
	EmailInvalid bool
	CardInvalid  bool
	CSRFField    string // the hidden field's name; its value is Page.CSRFToken
	PayLabel     string // the button: "Pay €90.00"
	Free         bool   // nothing to pay: no card field
	SeatsLink    ActionLink
	TestCards    []TestCard
}

// TestCard is a card number the built-in test provider understands, and what it does.
type TestCard struct {
	Number  string
	Outcome string
}

// Order is the order page: where the order stands, and its tickets once confirmed.
type Order struct {
	Page
	Number string // "Order 42"
	Event  OrderEvent
	// Tone names the kind of state for styling: "waiting", "done" or "problem".
	Tone    string
	Heading string
	Message string
	// PollURL, when set, is fetched every second until the order is final; the answer
	// replaces the status and no longer carries it once nothing more will change.
	PollURL string
	// Notes are further facts under the message, one paragraph each: refunds of extra
	// payments of a confirmed order.
	Notes   []string
	Next    ActionLink // empty when there is nothing for the buyer to do
	Lines   []OrderLine
	Total   string
	Email   string
	Tickets []Ticket
	// PDFURL and CalendarURL are the tickets as PDF and the event's calendar entry
	// (a confirmed order's), at addresses that work for whoever reached the page.
	PDFURL      string
	CalendarURL string
	// FindURL is the page that sends a buyer the links of their orders.
	FindURL string
}

// Ticket is one printable ticket: what it admits to and the QR code the door scans.
type Ticket struct {
	Label  string // "Ticket 1 of 2"
	Code   string
	Event  OrderEvent
	Place  []TicketField // section, row and seat; or the general-admission tier
	QR     QR
	QRName string // the QR code's accessible name
}

// TicketField is one labelled fact on a ticket, such as "Row: F".
type TicketField struct {
	Label string
	Value string
}

// QR is a QR code drawn as SVG: one path of the dark modules on a square of ViewBox
// (quiet zone included). Vector, so it prints sharp at any size.
type QR struct {
	ViewBox string // "0 0 37 37"
	Side    string // the square's side in modules, for the white background
	Path    string
}
