package views

// The view models of the emails a buyer gets (internal/mail builds them). As for pages,
// every text is already worded for people; the HTML part (mail.templ) and the plain
// text part (internal/mail) only place it, so the two always say the same.

// MailConfirmation is the email that confirms a paid order and carries its tickets.
type MailConfirmation struct {
	Subject string
	Heading string // "Your tickets for Hamlet"
	Intro   string
	Number  string // "Order 42"
	Event   OrderEvent
	Lines   []OrderLine
	Total   string
	// OrderURL is the order page, through the order's access link: it opens the
	// tickets on any device. The email carries the tickets themselves as well, for a
	// phone at the door without a connection.
	OrderURL string
	// PDFURL and CalendarURL are the tickets as PDF and the event's calendar entry,
	// through the same link.
	PDFURL      string
	CalendarURL string
	Tickets     []MailTicket
}

// MailTicket is one ticket in an email: what it admits to, its code, and its QR code as
// an image attached to the email.
type MailTicket struct {
	Label string // "Ticket 1 of 2"
	Code  string
	Place []TicketField
	// QRSrc is the QR code image's address inside the email, "cid:<content id>".
	QRSrc  string
	QRName string // the image's alternative text
}

// MailRefund is the email that says an order's payment was (or is being) refunded,
// and why, in plain words.
type MailRefund struct {
	Subject  string
	Heading  string // "Your payment has been refunded"
	Message  string // why, and what happens to the money
	Number   string
	Event    OrderEvent
	Lines    []OrderLine
	Total    string
	OrderURL string
}
