package web

import (
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"boxoffice/internal/booking"
	"boxoffice/internal/zone"
	"boxoffice/views"
)

// An event's vouchers and access codes: listed with their use, created, paused and
// exported.

// showCodes is the event's vouchers and access codes page.
func (s *server) showCodes(c echo.Context) error { return showSaved(c, s.renderCodes) }

func (s *server) renderCodes(c echo.Context, status int, notice, problem string) error {
	ev, err := s.adminEvent(c)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	setup, err := s.Desk.PriceSetup(ctx, ev.ID)
	if err != nil {
		return err
	}
	vouchers, err := s.Desk.Vouchers(ctx, ev.ID)
	if err != nil {
		return err
	}
	codes, err := s.Desk.AccessCodes(ctx, ev.ID)
	if err != nil {
		return err
	}
	names := map[int64]string{}
	p := views.CodesPage{AdminPage: adminPage(c, "Vouchers and access codes: "+ev.Name), EventName: ev.Name, Notice: notice,
		Error: problem, Base: adminEventURL(ev.ID), Zone: ev.Zone.String()}
	for _, t := range setup.Config.Types {
		names[t.ID] = t.Name
		p.Types = append(p.Types, views.Option{Value: strconv.FormatInt(t.ID, 10), Label: t.Name})
	}
	for _, v := range vouchers {
		p.Vouchers = append(p.Vouchers, views.VoucherItem{ID: strconv.FormatInt(v.ID, 10), Code: v.Code, Off: s.voucherOff(v),
			Types: typeNames(v.TypeIDs, names), Uses: uses(v.Used, v.Limit), Valid: validity(v.ValidFrom, v.ValidUntil, ev.Zone), Paused: v.Paused})
	}
	for _, a := range codes {
		p.Codes = append(p.Codes, views.AccessCodeItem{ID: strconv.FormatInt(a.ID, 10), Code: a.Code,
			Window: validity(a.PresaleStarts, a.PresaleEnds, ev.Zone), Places: uses(a.Used, a.Quota), Reveals: a.RevealsName, Paused: a.Paused})
	}
	return render(c, status, "no-store", views.AdminCodesPage(p))
}

func (s *server) voucherOff(v booking.VoucherRow) string {
	if v.PercentOffBP > 0 {
		return strings.TrimRight(strings.TrimRight(s.formatMoney(int64(v.PercentOffBP)), "0"), ".") + " %"
	}
	return s.formatMoney(v.AmountOff)
}

func typeNames(ids []int64, names map[int64]string) string {
	if len(ids) == 0 {
		return "all"
	}
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = names[id]
	}
	return strings.Join(out, ", ")
}

func uses(used, limit int) string {
	if limit == 0 {
		return strconv.Itoa(used) + " (no limit)"
	}
	return strconv.Itoa(used) + " of " + strconv.Itoa(limit)
}

func validity(from, until time.Time, loc *time.Location) string {
	switch {
	case from.IsZero() && until.IsZero():
		return "always"
	case until.IsZero():
		return "from " + zone.When(from, loc)
	case from.IsZero():
		return "until " + zone.When(until, loc)
	}
	return zone.When(from, loc) + " to " + zone.When(until, loc)
}

// formTime reads a datetime-local field in the event's zone; empty is the zero time.
func formTime(form url.Values, name, what string, loc *time.Location) (time.Time, error) {
	v := strings.TrimSpace(form.Get(name))
	if v == "" {
		return time.Time{}, nil
	}
	t, _, err := zone.ParseForm(v, loc)
	if err != nil {
		return time.Time{}, booking.InvalidPricing("%s: %v", what, err)
	}
	return t, nil
}

// createVoucher makes a voucher from the form.
func (s *server) createVoucher(c echo.Context) error {
	ev, err := s.adminEvent(c)
	if err != nil {
		return err
	}
	form, err := c.FormParams()
	if err != nil {
		return badRequest("invalid_form", "The form could not be read.")
	}
	in := booking.VoucherInput{Code: form.Get("code")}
	var errs [6]error
	in.AmountOff, errs[0] = s.formMoney(form, "amount_off", "the amount off")
	pct, e := s.formMoney(form, "percent_off", "the percentage off")
	in.PercentOffBP, errs[1] = int(pct), e // a percentage with two decimals is basis points
	in.Limit, errs[2] = formInt(form, "limit", "the usage limit")
	in.ValidFrom, errs[3] = formTime(form, "valid_from", "valid from", ev.Zone)
	in.ValidUntil, errs[4] = formTime(form, "valid_until", "valid until", ev.Zone)
	for _, v := range form["types"] {
		id, perr := strconv.ParseInt(v, 10, 64)
		if perr != nil {
			errs[5] = badRequest("invalid_form", "No such ticket type.")
		}
		in.TypeIDs = append(in.TypeIDs, id)
	}
	err = firstOf(errs[:])
	if err == nil {
		_, err = s.Desk.CreateVoucher(c.Request().Context(), ev.ID, in, s.deskActor(c))
	}
	return s.pricingAnswer(c, err, s.renderCodes, adminEventURL(ev.ID)+"/codes")
}

func firstOf(errs []error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

// createAccessCode makes an access code from the form.
func (s *server) createAccessCode(c echo.Context) error {
	ev, err := s.adminEvent(c)
	if err != nil {
		return err
	}
	form, err := c.FormParams()
	if err != nil {
		return badRequest("invalid_form", "The form could not be read.")
	}
	in := booking.AccessCodeInput{Code: form.Get("code")}
	var errs [4]error
	in.Starts, errs[0] = formTime(form, "starts", "the presale's opening", ev.Zone)
	in.Ends, errs[1] = formTime(form, "ends", "the presale's close", ev.Zone)
	in.Quota, errs[2] = formInt(form, "quota", "the quota")
	if v := form.Get("reveals"); v != "" {
		if in.RevealsTypeID, errs[3] = strconv.ParseInt(v, 10, 64); errs[3] != nil {
			errs[3] = badRequest("invalid_form", "No such ticket type.")
		}
	}
	err = firstOf(errs[:])
	if err == nil {
		_, err = s.Desk.CreateAccessCode(c.Request().Context(), ev.ID, in, s.deskActor(c))
	}
	return s.pricingAnswer(c, err, s.renderCodes, adminEventURL(ev.ID)+"/codes")
}

// setCodePaused pauses or resumes a voucher (voucher true) or an access code.
func (s *server) setCodePaused(voucher, paused bool) echo.HandlerFunc {
	return func(c echo.Context) error {
		ev, err := s.adminEvent(c)
		if err != nil {
			return err
		}
		id, err := pathID(c, "code")
		if err != nil {
			return err
		}
		if voucher {
			err = s.Desk.SetVoucherPaused(c.Request().Context(), ev.ID, id, paused, s.deskActor(c))
		} else {
			err = s.Desk.SetAccessCodePaused(c.Request().Context(), ev.ID, id, paused, s.deskActor(c))
		}
		return s.pricingAnswer(c, err, s.renderCodes, adminEventURL(ev.ID)+"/codes")
	}
}

// exportVouchers streams the event's vouchers with their use as CSV.
func (s *server) exportVouchers(c echo.Context) error {
	ev, err := s.adminEvent(c)
	if err != nil {
		return err
	}
	vouchers, err := s.Desk.Vouchers(c.Request().Context(), ev.ID)
	if err != nil {
		return err
	}
	w, err := s.startExport(c, ev, "vouchers", "event.export_vouchers", []string{"voucher", "code", "amount_off_cents",
		"percent_off_bp", "type_ids", "usage_limit", "used", "valid_from", "valid_until", "paused", "time_zone"})
	if w == nil || err != nil {
		return err
	}
	for _, v := range vouchers {
		ids := make([]string, len(v.TypeIDs))
		for i, id := range v.TypeIDs {
			ids[i] = strconv.FormatInt(id, 10)
		}
		err = w.Write([]string{strconv.FormatInt(v.ID, 10), csvSafe(v.Code), strconv.FormatInt(v.AmountOff, 10), strconv.Itoa(v.PercentOffBP),
			strings.Join(ids, " "), strconv.Itoa(v.Limit), strconv.Itoa(v.Used), csvTime(&v.ValidFrom, ev.Zone), csvTime(&v.ValidUntil, ev.Zone),
			strconv.FormatBool(v.Paused), ev.Zone.String()})
		if err != nil {
			break
		}
	}
	return finishCSV(s, c, w, err)
}

// exportAccessCodes streams the event's access codes with the places they sold as CSV.
func (s *server) exportAccessCodes(c echo.Context) error {
	ev, err := s.adminEvent(c)
	if err != nil {
		return err
	}
	codes, err := s.Desk.AccessCodes(c.Request().Context(), ev.ID)
	if err != nil {
		return err
	}
	w, err := s.startExport(c, ev, "access-codes", "event.export_access_codes", []string{"access_code", "code",
		"presale_starts_at", "presale_ends_at", "quota", "places_used", "reveals_type", "paused", "time_zone"})
	if w == nil || err != nil {
		return err
	}
	for _, a := range codes {
		err = w.Write([]string{strconv.FormatInt(a.ID, 10), csvSafe(a.Code), csvTime(&a.PresaleStarts, ev.Zone), csvTime(&a.PresaleEnds, ev.Zone),
			strconv.Itoa(a.Quota), strconv.Itoa(a.Used), csvSafe(a.RevealsName), strconv.FormatBool(a.Paused), ev.Zone.String()})
		if err != nil {
			break
		}
	}
	return finishCSV(s, c, w, err)
}
