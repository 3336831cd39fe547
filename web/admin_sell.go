package web

import (
	"crypto/rand"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"boxoffice/internal/booking"
	"boxoffice/internal/money"
	"boxoffice/internal/ordertext"
	"boxoffice/internal/zone"
	"boxoffice/static"
	"boxoffice/views"
)

// The box office's seat map: sell at the window and keep seats off sale (staff holds),
// on the same live map buyers see.

func sellURL(eventID int64, section string) string {
	u := "/admin/events/" + strconv.FormatInt(eventID, 10) + "/sell"
	if section != "" {
		u += "?section=" + url.QueryEscape(section)
	}
	return u
}

func staffHoldsURL(eventID int64) string {
	return "/admin/events/" + strconv.FormatInt(eventID, 10) + "/holds"
}

func saleURL(eventID, orderID int64) string {
	return "/admin/events/" + strconv.FormatInt(eventID, 10) + "/sales/" + strconv.FormatInt(orderID, 10)
}

// adminEvent is the event an admin address names; an id that cannot name one names
// none (404).
func (s *server) adminEvent(c echo.Context) (booking.Event, error) {
	id, err := booking.ParseID(c.Param("id"))
	if err != nil {
		return booking.Event{}, booking.ErrEventNotFound
	}
	return s.eventByID(c.Request().Context(), id)
}

// showSell is the staff seat map. To htmx (the live stream's reset) it answers with
// the map alone.
func (s *server) showSell(c echo.Context) error {
	ev, err := s.adminEvent(c)
	if err != nil {
		return err
	}
	section := c.QueryParam("section")
	varyHTMX(c)
	p, err := s.sellPage(c, ev, section, views.Message{}, sellInput{})
	if err != nil {
		return err
	}
	if isHTMX(c) {
		return render(c, http.StatusOK, personal, views.SeatMapFragment(p.Map))
	}
	return render(c, http.StatusOK, personal, views.StaffSellPage(p))
}

// sellInput is what the staff typed into the page's forms, shown again when a form
// comes back with a message; view is the section the map showed.
type sellInput struct {
	name, email, method, kind, reason, releaseAt, view string
	quantity, section, gaTier, gaQuantity              string
	types                                              map[string]string // by field name (admin_sell_types.go)
}

// staffMapPost reads a post of the staff map's form (by either of its buttons): the
// event, the fields, and what was typed. A body past the limit keeps its own answer
// (413).
func (s *server) staffMapPost(c echo.Context) (booking.Event, url.Values, sellInput, error) {
	ev, err := s.adminEvent(c)
	if err != nil {
		return ev, nil, sellInput{}, err
	}
	f, err := c.FormParams()
	if err != nil {
		var he *echo.HTTPError
		if errors.As(err, &he) {
			return ev, nil, sellInput{}, he
		}
		return ev, nil, sellInput{}, badRequest("invalid_form", "The form could not be read.")
	}
	in := sellInput{
		name: strings.TrimSpace(f.Get("name")), email: strings.TrimSpace(f.Get("email")), method: f.Get("method"),
		kind: f.Get("kind"), reason: strings.TrimSpace(f.Get("reason")), releaseAt: f.Get("release_at"), view: f.Get("view"),
		quantity: strings.TrimSpace(f.Get("quantity")), section: f.Get("section"),
		gaTier: f.Get("ga_tier"), gaQuantity: strings.TrimSpace(f.Get("ga_quantity")), types: typeCountsTyped(f),
	}
	if cleanText("view", in.view, 100) != nil {
		in.view = ""
	}
	return ev, f, in, nil
}

// sellPage builds the staff seat map of ev, saying msg. The map comes from the booking
// service's cache; the staff holds are read fresh, so the staff see which held seats
// are theirs to release.
func (s *server) sellPage(c echo.Context, ev booking.Event, section string, msg views.Message, in sellInput) (views.StaffSell, error) {
	ctx := c.Request().Context()
	m, sum, err := s.seatMapOf(ctx, ev.ID, section)
	if err != nil {
		return views.StaffSell{}, err
	}
	holds, err := s.Desk.StaffHolds(ctx, ev.ID)
	if err != nil {
		return views.StaffSell{}, err
	}
	p := adminPage(c, "Sell: "+ev.Name)
	p.Scripts = append(p.Scripts, static.URL("js/seats.js"))
	held := map[int64]string{}
	for _, h := range holds {
		for _, st := range h.Seats {
			held[st.ID] = h.Kind
		}
	}
	// The seats' labels say the online price, as the live stream's renderings (one
	// for every viewer of the map) do.
	prices, err := s.allInPrices(ctx, ev.ID)
	if err != nil {
		return views.StaffSell{}, err
	}
	now := time.Now()
	out := views.StaffSell{
		AdminPage: p, Event: eventHeader(ev, now), Message: msg, StreamURL: streamURL(ev, m),
		Legend: legend(s.Money, sum, booking.AllInPrices{}), // the desk quotes its own methods
		Map: seatMapView(mapArgs{ev: ev, m: m, sum: sum, section: section, csrf: p.CSRFToken,
			style: seatStyle{staff: held, prices: prices, money: s.Money},
			staff: &staffMap{pageURL: func(sec string) string { return sellURL(ev.ID, sec) }, formAction: sellURL(ev.ID, "")}}),
		Sale: views.SaleForm{Action: sellURL(ev.ID, ""), Token: rand.Text(), Name: in.name, Email: in.email,
			Quantity: in.quantity, GAQuantity: in.gaQuantity},
		Hold: views.StaffHoldForm{Action: staffHoldsURL(ev.ID), Reason: in.reason, ReleaseAt: in.releaseAt, Zone: ev.Zone.String()},
	}
	for _, m := range []struct{ value, label string }{{booking.PayCash, "Cash"}, {booking.PayCardPresent, "Card, present"}} {
		out.Sale.Methods = append(out.Sale.Methods, views.Option{Value: m.value, Label: m.label,
			Selected: m.value == in.method || (in.method == "" && m.value == booking.PayCash)})
	}
	if len(sum.Sections) > 1 {
		out.Sale.Sections = append(out.Sale.Sections, views.Option{Value: "", Label: "any section", Selected: in.section == ""})
		for _, sec := range sum.Sections {
			out.Sale.Sections = append(out.Sale.Sections, views.Option{Value: sec.Name, Label: sec.Name, Selected: sec.Name == in.section})
		}
	}
	for _, t := range m.GATiers {
		id := strconv.FormatInt(t.ID, 10)
		out.Sale.GATiers = append(out.Sale.GATiers, views.Option{Value: id, Selected: id == in.gaTier,
			Label: t.Name + ", " + s.Money.Short(t.PriceCents) + " (" + leftText(t.Remaining) + ")"})
	}
	if out.Sale.Types, err = s.saleTypeFields(ctx, ev.ID, in.types); err != nil {
		return views.StaffSell{}, err
	}
	for _, k := range booking.StaffHoldKinds {
		out.Hold.Kinds = append(out.Hold.Kinds, views.Option{Value: k, Label: holdKindText(k), Selected: k == in.kind})
	}
	for _, h := range holds {
		out.Holds = append(out.Holds, staffHoldView(ev, h, p.CSRFToken))
	}
	return out, nil
}

// holdKindText names a kind of staff hold for people.
func holdKindText(kind string) string {
	switch kind {
	case booking.HoldHouse:
		return "House seats"
	case booking.HoldPress:
		return "Press"
	case booking.HoldKill:
		return "Kill (never sold)"
	}
	return kind
}

func staffHoldView(ev booking.Event, h booking.StaffHold, csrf string) views.StaffHoldView {
	names := make([]string, len(h.Seats))
	for i, st := range h.Seats {
		names[i] = fmt.Sprintf("%s %s%d", st.Section, st.Row, st.Number)
	}
	v := views.StaffHoldView{
		Kind: holdKindText(h.Kind), Reason: h.Reason, Seats: strings.Join(names, ", "),
		Until: "Until released", By: "Held by " + h.StaffName + ", " + zone.Short(h.CreatedAt, ev.Zone),
		ReleaseURL: staffHoldsURL(ev.ID) + "/" + strconv.FormatInt(h.ID.Seq, 10) + "/release", CSRF: csrf,
	}
	if !h.ReleaseAt.IsZero() {
		v.Until = "Released automatically at " + zone.When(h.ReleaseAt, ev.Zone)
	}
	return v
}

// seatForm decodes the ticked seats of the staff map's form; how many, and each once,
// is booking's to judge (Sale, StaffHoldRequest).
func seatForm(f url.Values) ([]int64, error) {
	ids := make([]int64, 0, len(f["seat"]))
	for _, v := range f["seat"] {
		id, err := booking.ParseID(v)
		if err != nil {
			return nil, badRequest("invalid_seat_ids", "That is not a seat of this map.")
		}
		ids = append(ids, id)
	}
	return ids, nil
}

// sellSeats sells the ticked seats at once and sends the browser to their printable
// tickets. The same form posted twice sells once: the second post is sent to the
// first sale's tickets.
func (s *server) sellSeats(c echo.Context) error {
	ev, f, in, err := s.staffMapPost(c)
	if err != nil {
		return err
	}
	sale, err := saleForm(f, in)
	if err != nil {
		return s.sellRefused(c, ev, in, err)
	}
	m := currentStaff(c)
	sale.EventID, sale.StaffID, sale.Address = ev.ID, m.ID, c.RealIP()
	o, _, err := s.Desk.SellAtBoxOffice(c.Request().Context(), sale)
	if err != nil {
		return s.sellRefused(c, ev, in, err)
	}
	return c.Redirect(http.StatusSeeOther, saleURL(ev.ID, o.ID))
}

// saleForm decodes the sale form: ticked seats, or a number of best seats, or of
// standing places of a tier; booking judges the numbers and seats (Sale), the form's
// own fields are checked here. Anything wrong is a 400 that says what.
func saleForm(f url.Values, in sellInput) (booking.Sale, error) {
	var sale booking.Sale
	asked := 0
	for _, present := range []bool{len(f["seat"]) > 0, in.quantity != "", in.gaQuantity != ""} {
		if present {
			asked++
		}
	}
	var err error
	switch {
	case asked > 1:
		return sale, badRequest("invalid_request", "Tick seats, or give a number of best seats, or of standing places: one of them.")
	case in.quantity != "":
		if sale.Quantity, err = formNumber(in.quantity, "seats"); err != nil {
			return sale, err
		}
		if err := cleanText("section", in.section, 100); err != nil {
			return sale, err
		}
		sale.Section, sale.Together = in.section, true
	case in.gaQuantity != "":
		if sale.Quantity, err = formNumber(in.gaQuantity, "places"); err != nil {
			return sale, err
		}
		if sale.GATierID, err = booking.ParseID(in.gaTier); err != nil {
			return sale, badRequest("invalid_ga_tier", "That is not a standing tier of this event.")
		}
	default:
		if sale.SeatIDs, err = seatForm(f); err != nil {
			return sale, err
		}
	}
	switch {
	case in.method != booking.PayCash && in.method != booking.PayCardPresent:
		return booking.Sale{}, badRequest("invalid_method", "Choose how the buyer paid: cash or card.")
	case in.email != "" && !validEmail(in.email):
		return booking.Sale{}, badRequest("invalid_email", "That email address does not look right; correct it or leave it empty.")
	case len(in.name) > 200 || !utf8.ValidString(in.name) || strings.ContainsRune(in.name, 0):
		return booking.Sale{}, badRequest("invalid_name", "The name must be at most 200 characters of plain text.")
	}
	token := f.Get("token")
	if len(token) < 16 || len(token) > 64 {
		return booking.Sale{}, badRequest("invalid_token", "This form is incomplete; load the page again.")
	}
	sale.Method, sale.Token, sale.BuyerName, sale.Email = in.method, token, in.name, in.email
	sale.Types, err = typeCounts(in.types)
	return sale, err
}

// sellRefused shows the staff map again with why a sale or a staff hold was refused,
// under the status the refusal deserves. Failures on our side go to the error handler.
func (s *server) sellRefused(c echo.Context, ev booking.Event, in sellInput, err error) error {
	ae := s.toAPIError(inZone(sellError(err), ev.Zone))
	if ae.Status >= 500 || ae.Status < 400 || errors.Is(err, booking.ErrEventNotFound) {
		return err
	}
	_, seats, terr := s.takenSeats(c.Request().Context(), ev.ID, err)
	if terr != nil {
		return terr
	}
	msg := views.Message{Error: true, Text: ae.Message}
	if len(seats) > 0 {
		names := make([]string, len(seats))
		for i, st := range seats {
			names[i] = shortSeat(st)
		}
		msg.Text = "Not available: " + strings.Join(names, ", ") + ". Nothing was sold or held; choose again."
	}
	p, perr := s.sellPage(c, ev, in.view, msg, in)
	if errors.Is(perr, errNoSection) {
		p, perr = s.sellPage(c, ev, "", msg, in)
	}
	if perr != nil {
		return perr
	}
	return render(c, ae.Status, personal, views.StaffSellPage(p))
}

// sellError words the booking errors only staff pages meet.
func sellError(err error) error {
	switch {
	case errors.Is(err, booking.ErrReleaseInPast):
		return badRequest("release_in_past", "The release time has passed; choose a later one, or none.")
	case errors.Is(err, booking.ErrSaleFormUsed):
		return &apiError{Status: http.StatusConflict, Code: "form_used",
			Message: "This form already sold other seats; the page has been loaded again for a new sale."}
	}
	return err
}

// holdSeatsForStaff keeps the ticked seats off sale and goes back to the map, which
// lists the new hold.
func (s *server) holdSeatsForStaff(c echo.Context) error {
	ev, f, in, err := s.staffMapPost(c)
	if err != nil {
		return err
	}
	req, err := staffHoldForm(f, in, ev.Zone)
	if err != nil {
		return s.sellRefused(c, ev, in, err)
	}
	m := currentStaff(c)
	req.EventID, req.StaffID, req.Address = ev.ID, m.ID, c.RealIP()
	if _, err := s.Desk.HoldForStaff(c.Request().Context(), req); err != nil {
		return s.sellRefused(c, ev, in, err)
	}
	return c.Redirect(http.StatusSeeOther, sellURL(ev.ID, in.view)+"#staff-holds")
}

// staffHoldForm checks the staff-hold form; anything wrong is a 400 that says what.
// The release time is read on the clocks of the event's zone loc, as the page says.
func staffHoldForm(f url.Values, in sellInput, loc *time.Location) (booking.StaffHoldRequest, error) {
	seats, err := seatForm(f)
	if err != nil {
		return booking.StaffHoldRequest{}, err
	}
	req := booking.StaffHoldRequest{SeatIDs: seats, Kind: in.kind, Reason: in.reason}
	switch {
	case !utf8.ValidString(in.reason) || strings.ContainsRune(in.reason, 0):
		return req, badRequest("invalid_reason", "The reason must be plain text.")
	case in.reason == "":
		return req, badRequest("invalid_reason", "Say why these seats are held.")
	}
	if in.releaseAt != "" {
		at, _, err := zone.ParseForm(in.releaseAt, loc)
		var gap *zone.GapError
		if errors.As(err, &gap) {
			return req, badRequest("invalid_release_at", "The release time "+gap.Error()+".")
		} else if err != nil {
			return req, badRequest("invalid_release_at", "The release time must be a date and time, like 2026-12-24T18:00.")
		}
		req.ReleaseAt = at
	}
	return req, nil
}

// releaseStaffHold puts a staff hold's seats back on sale and goes back to the map.
func (s *server) releaseStaffHold(c echo.Context) error {
	ev, err := s.adminEvent(c)
	if err != nil {
		return err
	}
	seq, err := booking.ParseID(c.Param("hold"))
	if err != nil {
		return booking.ErrHoldNotFound
	}
	id := booking.HoldID{Event: ev.ID, Seq: seq}
	if err := s.Desk.ReleaseStaffHold(c.Request().Context(), id, currentStaff(c).ID, c.RealIP()); err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, sellURL(ev.ID, "")+"#staff-holds")
}

// showSale is a sale's printable tickets: any order of the event, so the box office
// can print an online buyer's tickets too.
func (s *server) showSale(c echo.Context) error {
	ev, err := s.adminEvent(c)
	if err != nil {
		return err
	}
	orderID, err := booking.ParseID(c.Param("order"))
	if err != nil {
		return booking.ErrOrderNotFound
	}
	ctx := c.Request().Context()
	o, rec, err := s.Desk.BoxOfficeOrder(ctx, ev.ID, orderID)
	if err != nil {
		return err
	}
	charges, err := s.Buyer.OrderCharges(ctx, o)
	if err != nil {
		return err
	}
	v, err := staffSaleView(c, s.Money, ev, o, rec, charges)
	if err != nil {
		return err
	}
	return render(c, http.StatusOK, personal, views.StaffSalePage(v))
}

// staffSaleView is a sale's receipt and tickets: its lines itemised as charged
// (types, fees, tax), its total the amount the window took.
func staffSaleView(c echo.Context, shop money.Shop, ev booking.Event, o booking.Order, rec *booking.SaleRecord, charges booking.Charges) (views.StaffSale, error) {
	number := "Order " + strconv.FormatInt(o.ID, 10)
	p := adminPage(c, number)
	p.Scripts = append(p.Scripts, static.URL("js/print.js"))
	lines, _ := ordertext.ChargeLines(shop, o.Seats, o.GA, charges)
	v := views.StaffSale{AdminPage: p, Number: number, Event: ordertext.OrderEvent(ev), Lines: lines,
		Total: shop.Format(o.AmountCents), SellURL: sellURL(ev.ID, ""), Paid: "Bought online", Buyer: o.Email}
	if rec != nil {
		v.Paid = "Paid in cash at the box office"
		if rec.Method == booking.PayCardPresent {
			v.Paid = "Paid by card at the box office"
		}
		v.Buyer = strings.TrimSpace(strings.Join([]string{rec.BuyerName, o.Email}, " "))
		v.SoldBy = "Sold by " + rec.StaffName + ", " + zone.When(rec.At, ev.Zone)
	}
	if o.Status != booking.StatusConfirmed {
		return v, nil // a refunded or unpaid order admits no one: no tickets to print
	}
	var err error
	v.Tickets, err = ticketViews(o, v.Event)
	return v, err
}
