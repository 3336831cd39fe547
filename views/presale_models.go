package views

// CodePage is where a buyer enters an access code that opens a presale.
type CodePage struct {
	Page
	Event     EventHeader
	Action    string // where the form posts
	CSRFField string
	// Entered is the code this browser entered for the event (empty: none); Message
	// says what it opens, once entered.
	Entered string
	Message string
	// Typed is what was typed and Refused why it was refused, when it was.
	Typed   string
	Refused string
	// Notice says, to a browser without a code while only a presale's waiting room
	// takes arrivals, that the sale is the presale's and when it opens to the public.
	Notice string
	// Next is the way on: the queue, or the seats.
	Next ActionLink
}
