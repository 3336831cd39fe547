package mail

import (
	"fmt"
	"strings"
	"time"

	"boxoffice/internal/zone"
)

// VerificationLink is what the email confirming a buyer's address for an onsale says.
type VerificationLink struct {
	To        string
	EventID   int64
	EventName string
	EmailID   int64 // the address's id: with EventID and Link it names the email
	Link      int   // which of the registration's links this is
	URL       string
	Expires   time.Time
	Zone      *time.Location // the event's venue's: Expires is written on its clocks
}

// Verification is the email carrying the link that confirms an address for an
// onsale, plain text only: it has one thing to say, and a link that mail programs
// make clickable. It names nobody but the event, and says what to do if the reader
// did not ask for it (someone else typed their address): nothing.
func Verification(v VerificationLink, s Site) Message {
	host := hostOf(s.BaseURL)
	var b strings.Builder
	fmt.Fprintf(&b, "Confirm your email for the onsale of %s\n\n", v.EventName)
	b.WriteString("This onsale is for verified buyers: each email address gets one place in the\n")
	b.WriteString("waiting room and one ticket limit. Open this link in the browser you will buy\n")
	b.WriteString("with, and press Confirm:\n\n")
	b.WriteString(v.URL + "\n\n")
	fmt.Fprintf(&b, "The link works once, until %s. Opened in another browser or\n", zone.When(v.Expires, v.Zone))
	b.WriteString("device, ask for a new link there: every browser you confirm in shares your one\n")
	b.WriteString("place and one limit.\n\n")
	b.WriteString("If you did not ask for this, do nothing: without the link nothing is confirmed.\n")
	return Message{
		To:       v.To,
		Subject:  "Confirm your email for " + v.EventName,
		ID:       fmt.Sprintf("verify-%d.event-%d.link-%d@%s", v.EmailID, v.EventID, v.Link, host),
		Text:     b.String(),
		Unlogged: true,
	}
}
