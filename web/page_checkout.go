package web

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/mail"
	"strconv"
	"strings"
	"time"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"

	"boxoffice/internal/booking"
	"boxoffice/internal/config"
	"boxoffice/internal/ordertext"
	"boxoffice/internal/zone"
	"boxoffice/views"
)

// personal is the Cache-Control of every page about one buyer.
const personal = "private, no-store"

// checkoutForm is what the checkout form sends.
type checkoutForm struct {
	Email string
	Card  string
	Free  bool // the hold costs nothing: no card is asked for
}

// showCheckout is the checkout page of a live hold. A hold that is over sends the buyer
// to its order when there is one to see (paid, or being paid), and otherwise answers 410
// with the way back to the seat map.
func (s *server) showCheckout(c echo.Context) error {
	id, err := pageHoldID(c)
	if err != nil {
		return err
	}
	buyer := s.pageBuyer(c)
	h, bq, err := s.Buyer.PricedHold(c.Request().Context(), id, buyer)
	if errors.Is(err, booking.ErrHoldExpired) {
		return s.holdOver(c, id, buyer, err)
	} else if err != nil {
		return err
	}
	m, err := s.checkoutModelOf(c, h, bq)
	if err != nil {
		return err
	}
	return renderPersonal(c, http.StatusOK, views.CheckoutPage(m), views.CheckoutForm(m))
}

// submitCheckout checks the hold out and pays in one step, then sends the buyer to the
// order page, which waits for the provider's confirmation. Bad input and a refused card
// bring the form back with the reason; the order (one per hold, however often this is
// posted) stays payable.
func (s *server) submitCheckout(c echo.Context) error {
	id, err := pageHoldID(c)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	buyer := s.pageBuyer(c)
	h, bq, err := s.Buyer.PricedHold(ctx, id, buyer)
	if errors.Is(err, booking.ErrHoldExpired) {
		return s.holdOver(c, id, buyer, err)
	} else if err != nil {
		return err
	}
	_, total := ordertext.ChargeLines(s.Money, h.Seats, h.GA, booking.ChargesOf(bq))
	form := checkoutForm{Email: strings.TrimSpace(c.FormValue("email")), Card: strings.TrimSpace(c.FormValue("card")), Free: total == 0}
	if msg, field := checkCheckoutForm(form); msg != "" {
		return s.checkoutAgain(c, h, form, http.StatusBadRequest, msg, field)
	}
	o, err := s.Buyer.Checkout(ctx, id, buyer, form.Email)
	if msg := s.saleWindowText(ctx, id.Event, err); msg != "" {
		return s.checkoutAgain(c, h, form, http.StatusConflict, msg, "")
	} else if err != nil {
		return s.withSeatsLink(ctx, id.Event, err)
	}
	if err := s.renewSession(c); err != nil { // the order's session gets a new token
		return err
	}
	if o.Status == booking.StatusConfirmed { // a free order confirms at checkout: nothing to pay
		s.leaveQueue(ctx, id.Event, buyer)
		return seeOther(c, orderURL(o.ID))
	}
	_, err = s.Buyer.Pay(ctx, o.ID, buyer, booking.PaymentMethod{Method: form.Card})
	if err == nil {
		s.leaveQueue(ctx, id.Event, buyer) // bought: the slot goes to the next in the queue
	}
	if msg := s.saleWindowText(ctx, id.Event, err); msg != "" {
		return s.checkoutAgain(c, h, form, http.StatusConflict, msg, "")
	}
	switch {
	case err == nil, errors.Is(err, booking.ErrPaymentInProgress), errors.Is(err, booking.ErrOrderNotPending):
		// Paid now, or by an earlier submit of this form: the order page tells how it ends.
		return seeOther(c, orderURL(o.ID))
	case errors.Is(err, booking.ErrCardDeclined):
		return s.checkoutAgain(c, h, form, http.StatusPaymentRequired,
			"Your card was declined and nothing was charged. Try another card.", "card")
	case errors.Is(err, booking.ErrInvalidCard):
		return s.checkoutAgain(c, h, form, http.StatusBadRequest,
			"That card number is not valid. Check it, or use one of the test cards below.", "card")
	}
	return s.withSeatsLink(ctx, id.Event, err)
}

// saleWindowText words a refusal by the event's sales window for the checkout form,
// or is "" for any other error. An onsale ahead is written in the event's zone.
func (s *server) saleWindowText(ctx context.Context, eventID int64, err error) string {
	var notOnSale *booking.NotOnSaleError
	switch {
	case errors.As(err, &notOnSale):
		loc := time.UTC
		if ev, everr := s.eventByID(ctx, eventID); everr == nil {
			loc = ev.Zone
		}
		return onsaleText(notOnSale.OnsaleAt, loc) + " Nothing has been charged."
	case errors.Is(err, booking.ErrSalesClosed):
		return "Sales for this event have closed, so this order cannot be paid. Nothing has been charged."
	}
	return ""
}

// holdOver answers for a hold that is no longer live. Checking out an existing order is
// idempotent and a lapsed hold cannot come back to life, so Checkout here only ever
// finds the hold's order (email unused) or reports the hold expired.
func (s *server) holdOver(c echo.Context, id booking.HoldID, buyer string, expired error) error {
	ctx := c.Request().Context()
	o, err := s.Buyer.Checkout(ctx, id, buyer, "")
	if err != nil {
		return s.withSeatsLink(ctx, id.Event, err)
	}
	if (o.Status == booking.StatusPending && !o.PaymentUnderWay) || o.Status == booking.StatusExpired {
		// Never paid, and now it cannot be: the seats are back on sale.
		return s.withSeatsLink(ctx, id.Event, expired)
	}
	return seeOther(c, orderURL(o.ID))
}

// withSeatsLink adds the way back to the event's seat map to an expired-hold error.
func (s *server) withSeatsLink(ctx context.Context, eventID int64, err error) error {
	if !errors.Is(err, booking.ErrHoldExpired) {
		return err
	}
	ev, eerr := s.eventByID(ctx, eventID)
	if eerr != nil {
		return err
	}
	return &onwardError{err: err, next: seatsLink(ev)}
}

// checkoutAgain brings the form back with a message, keeping what was typed except the
// card number.
func (s *server) checkoutAgain(c echo.Context, h booking.Hold, form checkoutForm, status int, msg, field string) error {
	m, err := s.checkoutModel(c, h)
	if err != nil {
		return err
	}
	m.Email, m.Message = form.Email, msg
	m.EmailInvalid, m.CardInvalid = field == "email", field == "card"
	return renderPersonal(c, status, views.CheckoutPage(m), views.CheckoutForm(m))
}

// checkCheckoutForm says what is wrong with the form, if anything, and which field it
// is about. It runs before anything is written: bad input changes nothing. The card
// is only checked for its shape; whether it pays is the provider's answer.
func checkCheckoutForm(f checkoutForm) (msg, field string) {
	switch {
	case f.Email == "":
		return "Enter the email address your tickets should go to.", "email"
	case !validEmail(f.Email):
		return "That email address does not look right; write it as ada@example.com.", "email"
	case f.Free:
		// Nothing to pay: no card is asked for, and one sent anyway is not used.
	case f.Card == "":
		return "Enter a card number.", "card"
	case !cardShaped(f.Card):
		return "That card number is not valid. Check it, or use one of the test cards below.", "card"
	}
	return "", ""
}

// validEmail accepts a plain address only, as the JSON API does: no display name, no
// comments, nothing PostgreSQL could not store.
func validEmail(s string) bool {
	if cleanText("email", s, 254) != nil {
		return false
	}
	addr, err := mail.ParseAddress(s)
	return err == nil && addr.Address == s
}

// cardShaped reports whether s could be a card number: 12 to 19 digits, spaces allowed.
func cardShaped(s string) bool {
	digits := 0
	for _, r := range s {
		switch {
		case r >= '0' && r <= '9':
			digits++
		case r != ' ':
			return false
		}
	}
	return digits >= 12 && digits <= 19
}

// checkoutModel is the checkout page of a hold, without a message, priced afresh.
func (s *server) checkoutModel(c echo.Context, h booking.Hold) (views.Checkout, error) {
	// The basket's quote is what checkout charges: the page says that sum.
	bq, err := s.Buyer.Quote(c.Request().Context(), h.ID, s.pageBuyer(c))
	if err != nil {
		return views.Checkout{}, err
	}
	return s.checkoutModelOf(c, h, bq)
}

// checkoutModelOf is the checkout page of hold h, priced by bq, without a message.
func (s *server) checkoutModelOf(c echo.Context, h booking.Hold, bq booking.BasketQuote) (views.Checkout, error) {
	ev, err := s.eventByID(c.Request().Context(), h.ID.Event)
	if err != nil {
		return views.Checkout{}, err
	}
	lines, total := ordertext.ChargeLines(s.Money, h.Seats, h.GA, booking.ChargesOf(bq))
	m := views.Checkout{
		Page:   checkoutPage(c),
		Action: "/holds/" + h.ID.String() + "/checkout",
		Event:  ordertext.OrderEvent(ev),
		Lines:  lines, Total: s.Money.Format(total),
		ExpiresAt:   h.ExpiresAt.UTC().Format(time.RFC3339),
		ExpiresText: expiryText(h.ExpiresAt, ev.Zone, time.Now()),
		CSRFField:   csrfForm,
		PayLabel:    "Pay " + s.Money.Format(total),
		Free:        total == 0,
		SeatsLink:   views.ActionLink{Href: seatsLink(ev).Href, Text: "Change seats"},
	}
	if m.Free {
		m.PayLabel = "Get my tickets"
	}
	if s.ProviderName == config.ProviderTest {
		// Real providers' cards are theirs to document (and Stripe's take a payment
		// method id from its own card form, not a number typed here).
		for _, number := range []string{"4242 4242 4242 4242", "4000 0000 0000 0002"} {
			m.TestCards = append(m.TestCards, views.TestCard{Number: number, Outcome: testCards[number]})
		}
	}
	return m, nil
}

// checkoutPage is the frame of the checkout page, with the countdown script.
func checkoutPage(c echo.Context) views.Page {
	p := buyerPage(c, "Checkout")
	p.Scripts = append(p.Scripts, countdownScript)
	return p
}

func seatsLink(ev booking.Event) views.ActionLink {
	return views.ActionLink{Href: seatsURL(ev, ""), Text: "Choose seats again"}
}

// expiryText says until when a hold lasts, for people without the countdown script, on
// the clocks of the event's zone loc.
func expiryText(expires time.Time, loc *time.Location, now time.Time) string {
	left := expires.Sub(now).Round(time.Minute)
	at := zone.Clock(expires, loc)
	switch {
	case left < time.Minute:
		return at + " (less than a minute from now)"
	case left == time.Minute:
		return at + " (about a minute from now)"
	}
	return fmt.Sprintf("%s (about %d minutes from now)", at, int(left/time.Minute))
}

// pageHoldID reads the hold id of a page's address. An address that cannot name a hold
// names no hold: 404, as for a hold of someone else.
func pageHoldID(c echo.Context) (booking.HoldID, error) {
	id, err := booking.ParseHoldID(c.Param("holdId"))
	if err != nil {
		return id, booking.ErrHoldNotFound
	}
	return id, nil
}

// pageBuyer is the session's buyer, or "" for a session that never held anything,
// which owns nothing. Unlike buyer, it starts no session: looking creates nothing.
func (s *server) pageBuyer(c echo.Context) string {
	return s.Sessions.GetString(c.Request().Context(), buyerKey)
}

// renderPersonal renders a page about one buyer, or its fragment for htmx; both are
// never stored by anyone.
func renderPersonal(c echo.Context, status int, whole, fragment templ.Component) error {
	varyHTMX(c)
	if isHTMX(c) {
		return render(c, status, personal, fragment)
	}
	return render(c, status, personal, whole)
}

// seeOther sends the browser on after a form: a 303 turns the POST into a GET of the
// new page. htmx follows redirects inside its request and would place the new page in
// the old one, so it is told to go there instead.
func seeOther(c echo.Context, url string) error {
	if isHTMX(c) {
		c.Response().Header().Set("HX-Redirect", url)
		return c.NoContent(http.StatusNoContent)
	}
	return c.Redirect(http.StatusSeeOther, url)
}

func orderURL(id int64) string { return "/orders/" + strconv.FormatInt(id, 10) }
