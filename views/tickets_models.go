package views

// FindTickets is the page that sends a buyer the links of their orders.
type FindTickets struct {
	Page
	Action    string // where the form posts
	CSRFField string
	Email     string // what was typed, shown again
	// Sent: the form was sent; the answer is the same for every address.
	Sent    bool
	Message string // why the form came back (an address that is not one, too many asks)
}
