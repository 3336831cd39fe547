package views

// RefundConfirm is the page that shows what a staff refund or void will do before it
// is done, with the one button that does it.
type RefundConfirm struct {
	AdminPage
	OrderID  int64
	OrderURL string // back to the order, changing nothing
	Action   string // the confirmation's address
	Kind     string // refund or void
	Heading  string // "Refund 2 tickets of order 42"
	Whole    bool   // no valid ticket is left after it
	Tickets  []AdminTicket
	Amount   string // "€50.00"
	Method   string // how the money goes back, in words
	Key      string // the confirmation's own key: a second submit changes nothing more
	Button   string // the confirm button's words
}

// Till is the till report: per day and member of staff, what was taken and given
// back by each method, and the totals of the range.
type Till struct {
	AdminPage
	From, To string // the range's dates, 2027-01-05
	Error    string
	Groups   []TillGroup
	Totals   []TillRow // per method, over the range
	Total    TillRow   // every method
	CSVURL   string
}

// TillGroup is one member's day.
type TillGroup struct {
	Day   string // "Tue 5 Jan 2027"
	Zone  string // the venues' zone the day is on the clocks of
	Staff string
	Rows  []TillRow
}

// TillRow is one method's sales and refunds. The *Cents fields are for the page's
// data attributes (scripts and tests read them); the others are for people.
type TillRow struct {
	Method                             string // cash, card_present, card, or "" for all
	Label                              string // "Cash"
	Sales, Refunds                     int
	Sold, Refunded, Net                string
	SoldCents, RefundedCents, NetCents int
}
