package web

import (
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"boxoffice/internal/booking"
	"boxoffice/internal/pricing"
	"boxoffice/views"
)

// The event's prices: ticket types with a price per level, fees and tax. Amounts are
// typed in major units ("12.50") and kept in minor units.

// parseMoney reads an amount typed in the shop's format ("12.50", "12,50") into
// hundredths: minor units of money, or a rate's basis points.
func (s *server) parseMoney(v string) (int64, error) {
	n, err := s.Money.Parse(v)
	return int64(n), err
}

// formatMoney writes hundredths back as the form field shows them.
func (s *server) formatMoney(v int64) string { return s.Money.Input(int(v)) }

// feeMethods are the fee rows of the form, every method's first.
var feeMethods = []struct{ key, label string }{
	{booking.FeesAll, "Every method"}, {string(pricing.MethodOnline), "Online (added)"},
	{string(pricing.MethodCash), "Cash at the box office (added)"}, {string(pricing.MethodCardPresent), "Card at the box office (added)"},
}

func levelKey(l pricing.Level) string {
	if l.GATierID != 0 {
		return "ga" + strconv.FormatInt(l.GATierID, 10)
	}
	return "tier" + strconv.FormatInt(l.PriceTierID, 10)
}

// showPricing is the event's price page.
func (s *server) showPricing(c echo.Context) error { return showSaved(c, s.renderPricing) }

// showSaved renders a page of settings, saying "Saved." after a change sent it back.
func showSaved(c echo.Context, render func(echo.Context, int, string, string) error) error {
	notice := ""
	if c.QueryParam("saved") != "" {
		notice = "Saved."
	}
	return render(c, http.StatusOK, notice, "")
}

func (s *server) renderPricing(c echo.Context, status int, notice, problem string) error {
	ev, err := s.adminEvent(c)
	if err != nil {
		return err
	}
	setup, err := s.Desk.PriceSetup(c.Request().Context(), ev.ID)
	if err != nil {
		return err
	}
	cfg := setup.Config
	p := views.PricingPage{AdminPage: adminPage(c, "Prices: "+ev.Name), EventName: ev.Name, Notice: notice, Error: problem,
		Base: adminEventURL(ev.ID), CodesURL: adminEventURL(ev.ID) + "/codes",
		TaxRate: s.formatMoney(int64(cfg.TaxRateBP)), TaxLabel: cfg.TaxLabel}
	for _, m := range feeMethods {
		f := cfg.Fees
		if m.key != booking.FeesAll {
			f = cfg.MethodFees[pricing.Method(m.key)]
		}
		p.Fees = append(p.Fees, views.FeeRow{Method: m.key, Label: m.label, PerTicket: s.formatMoney(f.PerTicket), PerOrder: s.formatMoney(f.PerOrder)})
	}
	for _, l := range setup.Levels {
		p.Levels = append(p.Levels, views.LevelColumn{Key: levelKey(l.Level), Name: l.Name, Base: s.formatMoney(l.BasePrice)})
	}
	for _, t := range cfg.Types {
		row := views.TypeRow{ID: strconv.FormatInt(t.ID, 10), Name: t.Name, Position: strconv.Itoa(t.Position),
			CountsAsAdult: t.CountsAsAdult, NeedsAdult: t.NeedsAdult, DeskOnly: t.DeskOnly, CodeOnly: t.CodeOnly, Paused: t.Paused}
		if t.MaxPerOrder > 0 {
			row.MaxPerOrder = strconv.Itoa(t.MaxPerOrder)
		}
		for _, l := range setup.Levels {
			cell := views.PriceCell{Key: levelKey(l.Level), Level: l.Name}
			if v, ok := t.Prices[l.Level]; ok {
				cell.Value = s.formatMoney(v)
			}
			row.Prices = append(row.Prices, cell)
		}
		p.Types = append(p.Types, row)
	}
	p.New.Position = strconv.Itoa(len(cfg.Types) + 1)
	for _, l := range setup.Levels {
		p.New.Prices = append(p.New.Prices, views.PriceCell{Key: levelKey(l.Level), Level: l.Name + " (own price " + s.formatMoney(l.BasePrice) + ")"})
	}
	return render(c, status, "no-store", views.AdminPricingPage(p))
}

// pricingAnswer answers a change: back to the page when it worked, the page with the
// reason and a 400 when the input was refused.
func (s *server) pricingAnswer(c echo.Context, err error, render func(echo.Context, int, string, string) error, back string) error {
	var inv *booking.InvalidError
	if errors.As(err, &inv) {
		return render(c, http.StatusBadRequest, "", invalidRequest(inv).Message)
	} else if errors.Is(err, booking.ErrTypeNotFound) || errors.Is(err, booking.ErrCodeNotFound) {
		return &apiError{Status: http.StatusNotFound, Code: "not_found", Message: "No such type or code for this event."}
	} else if err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, back+"?saved=1")
}

// formMoney reads the amount field name: empty is 0.
func (s *server) formMoney(form url.Values, name, what string) (int64, error) {
	v := strings.TrimSpace(form.Get(name))
	if v == "" {
		return 0, nil
	}
	n, err := s.parseMoney(v)
	if err != nil {
		return 0, booking.InvalidPricing("%s: %v", what, err)
	}
	return n, nil
}

// formInt reads the whole number field name: empty is 0.
func formInt(form url.Values, name, what string) (int, error) {
	v := strings.TrimSpace(form.Get(name))
	if v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, booking.InvalidPricing("%s must be a whole number", what)
	}
	return n, nil
}

// setPricing saves the tax and fees.
func (s *server) setPricing(c echo.Context) error {
	ev, err := s.adminEvent(c)
	if err != nil {
		return err
	}
	form, err := c.FormParams()
	if err != nil {
		return badRequest("invalid_form", "The form could not be read.")
	}
	in := booking.PricingInput{TaxLabel: form.Get("tax_label"), Fees: map[string]pricing.Fees{}}
	rate, err := s.formMoney(form, "tax_rate", "the tax rate")
	in.TaxRateBP = int(rate) // a percentage with two decimals is basis points
	for _, m := range feeMethods {
		var f pricing.Fees
		var e1, e2 error
		f.PerTicket, e1 = s.formMoney(form, "fee_ticket_"+m.key, "a fee")
		f.PerOrder, e2 = s.formMoney(form, "fee_order_"+m.key, "a fee")
		err = errors.Join(err, e1, e2)
		in.Fees[m.key] = f
	}
	if err == nil {
		err = s.Desk.SetPricing(c.Request().Context(), ev.ID, in, s.deskActor(c))
	}
	return s.pricingAnswer(c, firstErr(err), s.renderPricing, adminEventURL(ev.ID)+"/pricing")
}

// firstErr is the first of joined errors, so one reason is shown.
func firstErr(err error) error {
	if j, ok := err.(interface{ Unwrap() []error }); ok && len(j.Unwrap()) > 0 {
		return j.Unwrap()[0]
	}
	return err
}

func (s *server) deskActor(c echo.Context) booking.Actor {
	return booking.Actor{StaffID: currentStaff(c).ID, Address: c.RealIP()}
}

// saveType creates or changes a ticket type with its prices.
func (s *server) saveType(c echo.Context) error {
	ev, err := s.adminEvent(c)
	if err != nil {
		return err
	}
	form, err := c.FormParams()
	if err != nil {
		return badRequest("invalid_form", "The form could not be read.")
	}
	setup, err := s.Desk.PriceSetup(c.Request().Context(), ev.ID)
	if err != nil {
		return err
	}
	in := booking.TypeInput{Name: form.Get("name"), CountsAsAdult: form.Get("counts_as_adult") == "on",
		NeedsAdult: form.Get("needs_adult") == "on", DeskOnly: form.Get("desk_only") == "on", CodeOnly: form.Get("code_only") == "on",
		Prices: map[pricing.Level]int64{}}
	var e1, e2, e3 error
	if v := form.Get("id"); v != "" {
		if in.ID, e1 = strconv.ParseInt(v, 10, 64); e1 != nil || in.ID <= 0 {
			return badRequest("invalid_form", "No such ticket type.")
		}
	}
	in.Position, e2 = formInt(form, "position", "the position")
	in.MaxPerOrder, e3 = formInt(form, "max_per_order", "the most per order")
	err = errors.Join(e2, e3)
	for _, l := range setup.Levels {
		key := "price_" + levelKey(l.Level)
		if strings.TrimSpace(form.Get(key)) == "" {
			continue
		}
		p, perr := s.formMoney(form, key, l.Name)
		err = errors.Join(err, perr)
		in.Prices[l.Level] = p
	}
	if err == nil {
		_, err = s.Desk.SaveType(c.Request().Context(), ev.ID, in, s.deskActor(c))
	}
	return s.pricingAnswer(c, firstErr(err), s.renderPricing, adminEventURL(ev.ID)+"/pricing")
}

// setTypePaused pauses or resumes a ticket type.
func (s *server) setTypePaused(paused bool) echo.HandlerFunc {
	return func(c echo.Context) error {
		ev, err := s.adminEvent(c)
		if err != nil {
			return err
		}
		id, err := pathID(c, "type")
		if err != nil {
			return err
		}
		err = s.Desk.SetTypePaused(c.Request().Context(), ev.ID, id, paused, s.deskActor(c))
		return s.pricingAnswer(c, err, s.renderPricing, adminEventURL(ev.ID)+"/pricing")
	}
}
