package views

// EventHeader names an event on its pages.
type EventHeader struct {
	Name     string
	Venue    string
	When     string // already formatted for people
	OnSale   string // "On sale now", or when the sale opens
	URL      string // the public event page
	SeatsURL string // the seat selection page
}

// EventPage is the public page of one event. Nothing in it is about one buyer, so a
// CDN may keep it and serve it to everyone.
type EventPage struct {
	Page
	Event        EventHeader
	Availability Availability
	// WayIn is the page's call to action: the waiting room while the event's room is
	// on, the seat map otherwise.
	WayIn ActionLink
	// CodeURL is the page to enter an access code for a presale, while the public
	// sale is ahead (empty otherwise).
	CodeURL string
	// Onsale counts down to the onsale while it is ahead (zero otherwise).
	Onsale Countdown
}

// Countdown is a moment ahead, the same for everyone (the page is cached): At for a
// script (RFC 3339), In for people ("in 2 hours 5 minutes"), as of when the page was
// made.
type Countdown struct {
	At string
	In string
}

// Availability is the part of the event page that changes as seats sell. The page
// refreshes it now and then (htmx asks the same URL, which then answers with this part
// alone), so it carries its own URL.
type Availability struct {
	URL      string
	Summary  string // e.g. "1,234 of 1,980 seats left"
	SoldOut  bool
	Sections []SectionLine
	Prices   []PriceLine
	GA       []GALine
}

// SectionLine is one section in the event page's availability table.
type SectionLine struct {
	Name      string
	Prices    string // e.g. "£39–£65"
	Left      string // e.g. "312 of 640 left"
	Available int    // for the <meter>
	Seats     int
}

// PriceLine is one seat price in the event page's price list.
type PriceLine struct {
	Price string
	Left  string // e.g. "120 left", "sold out"
}

// GALine is one general-admission tier in the event page's price list.
type GALine struct {
	Name  string
	Price string
	Left  string
}
