package views

// VerifyRegister is the page where a buyer registers an email for an onsale that is
// for verified buyers, and sees whether this browser has confirmed one.
type VerifyRegister struct {
	Page
	Event     EventHeader
	Action    string // where the form posts
	CSRFField string
	Email     string // what was typed, shown again
	// Confirmed: this browser confirmed an email for the event; Next is the way on.
	Confirmed bool
	Next      ActionLink
	// Sent: the form was sent; the answer is the same for every address.
	Sent    bool
	Message string // why the form came back (an address that is not one)
}

// VerifyConfirm is the page a link in the email opens: one button confirms, so that a
// mail program fetching the link to scan it confirms nothing.
type VerifyConfirm struct {
	Page
	Event     EventHeader
	Action    string
	CSRFField string
	Token     string
}
