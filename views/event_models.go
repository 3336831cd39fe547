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
