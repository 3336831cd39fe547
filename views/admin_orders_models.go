package views

// OrderSearch is the box office's order search: what was typed, the orders found (the
// newest orders when nothing was typed) and the way to the next page, and the exports
// of each event.
type OrderSearch struct {
	AdminPage
	Query   string
	Error   string
	Results []OrderHit
	// Searched says a search ran (an empty result is then "nothing found").
	Searched bool
	// NextURL is the next page of results, "" on the last.
	NextURL string
	Exports []EventExport
}

// OrderHit is one order in the search results.
type OrderHit struct {
	ID      int64
	URL     string
	Event   string
	Email   string
	Status  string
	Total   string
	Tickets int
	Created string
}

// EventExport is one event's CSV exports.
type EventExport struct {
	Name, OrdersURL, CheckinsURL string
}

// AdminOrder is one order as the box office sees it, with what staff may do to it.
type AdminOrder struct {
	AdminPage
	ID        int64
	Event     string
	Email     string
	Status    string
	Reason    string
	Total     string
	Created   string
	Confirmed string
	// Notice says what was just done (after a refund, a void or a resend).
	Notice string
	Error  string
	// CanChange says the order is confirmed: tickets may be refunded or voided and the
	// confirmation sent again.
	CanChange bool
	Action    string // the form's address for refunds and voids
	Resend    string // the form's address for resending
	Tickets   []AdminTicket
	Payments  []AdminPayment
	Refunds   []AdminRefund
	History   []AdminHistory

	// LinkAction is the form's address for revoking the order's access links;
	// LinkVersion is their version now (1 until first revoked), and LinkResend says a
	// new link may be sent (the order was paid).
	LinkAction  string
	LinkVersion int
	LinkResend  bool

	// Lines itemise what the order charged (types, fees, discount, tax); Voucher
	// names the voucher it redeemed and its discount ("SPRING, −€2.00"), or a
	// discount whose voucher use was given back.
	Lines   []OrderLine
	Voucher string
	// AccessCode is the presale code the order's places were counted against, with
	// how many ("FANCLUB, 2 of its places"); empty: a public order.
	AccessCode string
}

// AdminTicket is one ticket of an order.
type AdminTicket struct {
	ID     int64
	Code   string
	Place  string
	Price  string
	State  string // "valid", "refunded", "voided", "checked in at 19:02, gate North"
	Usable bool   // valid and not used: may be refunded or voided
}

// AdminPayment is one charge attempt of an order.
type AdminPayment struct {
	Provider, Ref, Amount, State, At string
}

// AdminRefund is one refund of an order.
type AdminRefund struct {
	Amount, Reason, State, At string
}

// AdminHistory is one thing staff did to an order: a sentence ("Refunded by Anna at
// …") and the fields it changed.
type AdminHistory struct {
	Sentence string
	Changes  []AuditChange
}

// AuditChange is one field an action set or changed, in words; Before is "" when the
// action set it.
type AuditChange struct {
	Field, Before, After string
}

// Checkin is the door's page: the event and gate chosen, the code form and the last
// answer.
type Checkin struct {
	AdminPage
	Events  []CheckinEvent
	EventID int64
	Gate    string
	Event   string // the chosen event's name
	Counts  string // "312 of 1,980 tickets in"
	Result  CheckinResult
}

// CheckinEvent is an event the door may check in for.
type CheckinEvent struct {
	ID       int64
	Name     string
	Selected bool
}

// CheckinResult is the answer to one scan, shown large and in colour, with words.
type CheckinResult struct {
	// Tone is valid, used, void, wrong or unknown (the colour), or error for bad
	// input; "" before any scan.
	Tone     string
	Headline string // "Valid", "Already used", …
	Detail   string // "Stalls, row F, seat 12"; "at 19:02 at gate North"
	Code     string
}
