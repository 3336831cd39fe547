package web

import (
	"encoding/csv"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"boxoffice/internal/booking"
	"boxoffice/views"
)

// The till report (/admin/till): per day and member of staff, what was taken at the
// window and given back, by method, with the range's totals; and the same lines as
// CSV (/admin/till.csv).

// dateLayout is how the range's dates are typed (a date field's value).
const dateLayout = time.DateOnly

// tillMethods are the methods in the order the report lists them, with their words.
var tillMethods = []struct{ code, label string }{
	{booking.PayCash, "Cash"},
	{booking.PayCardPresent, "Card at the desk"},
	{booking.MethodCard, "Card, through the provider"},
}

// tillRange reads ?from= and ?to= (dates). Without them the range is the last seven
// days, ending tomorrow in UTC so that today is in it on every venue's clocks.
func tillRange(c echo.Context) (from, to time.Time, err error) {
	to = time.Now().UTC().Truncate(24*time.Hour).AddDate(0, 0, 1)
	from = to.AddDate(0, 0, -7)
	if v := c.QueryParam("from"); v != "" {
		if from, err = time.Parse(dateLayout, v); err != nil {
			return from, to, badRequest("invalid_date", "Type the first day as a date such as 2027-01-05.")
		}
	}
	if v := c.QueryParam("to"); v != "" {
		if to, err = time.Parse(dateLayout, v); err != nil {
			return from, to, badRequest("invalid_date", "Type the last day as a date such as 2027-01-05.")
		}
	}
	return from, to, nil
}

// showTill is the till report.
func (s *server) showTill(c echo.Context) error {
	m := views.Till{AdminPage: adminPage(c, "Till")}
	from, to, err := tillRange(c)
	m.From, m.To = from.Format(dateLayout), to.Format(dateLayout)
	var lines []booking.TillLine
	if err == nil {
		lines, err = s.Desk.Till(c.Request().Context(), from, to)
	}
	if msg, status, ok := tillFault(err); ok {
		m.Error = msg
		return render(c, status, "no-store", views.TillPage(m))
	} else if err != nil {
		return err
	}
	m.CSVURL = "/admin/till.csv?" + url.Values{"from": {m.From}, "to": {m.To}}.Encode()
	totals := map[string]*booking.TillLine{}
	all := booking.TillLine{}
	for i, l := range lines {
		if i == 0 || !sameTillGroup(lines[i-1], l) {
			m.Groups = append(m.Groups, views.TillGroup{Day: l.Day.Format("Mon 2 Jan 2006"), Zone: l.Zone, Staff: l.StaffName})
		}
		g := &m.Groups[len(m.Groups)-1]
		g.Rows = append(g.Rows, s.tillRow(l.Method, l))
		if totals[l.Method] == nil {
			totals[l.Method] = &booking.TillLine{}
		}
		addTill(totals[l.Method], l)
		addTill(&all, l)
	}
	for _, meth := range tillMethods {
		if t := totals[meth.code]; t != nil {
			m.Totals = append(m.Totals, s.tillRow(meth.code, *t))
		}
	}
	m.Total = s.tillRow("", all)
	m.Total.Label = "All methods"
	return render(c, http.StatusOK, "no-store", views.TillPage(m))
}

// tillFault words a bad range for the page: ok says err is one.
func tillFault(err error) (msg string, status int, ok bool) {
	var ae *apiError
	var bad *booking.InvalidError
	switch {
	case errors.As(err, &ae):
		return ae.Message, ae.Status, true
	case errors.As(err, &bad):
		return "Choose a range of 1 to " + strconv.Itoa(booking.MaxTillDays) + " days, the first day first.", http.StatusBadRequest, true
	}
	return "", 0, false
}

// sameTillGroup reports whether two lines are of one member's day.
func sameTillGroup(a, b booking.TillLine) bool {
	return a.Day.Equal(b.Day) && a.Zone == b.Zone && a.StaffID == b.StaffID
}

func addTill(sum *booking.TillLine, l booking.TillLine) {
	sum.Sales += l.Sales
	sum.SoldCents += l.SoldCents
	sum.Refunds += l.Refunds
	sum.RefundedCents += l.RefundedCents
}

// tillRow is a line as the page shows it.
func (s *server) tillRow(method string, l booking.TillLine) views.TillRow {
	r := views.TillRow{Method: method, Label: method, Sales: l.Sales, Refunds: l.Refunds,
		SoldCents: l.SoldCents, RefundedCents: l.RefundedCents, NetCents: l.SoldCents - l.RefundedCents}
	for _, m := range tillMethods {
		if m.code == method {
			r.Label = m.label
		}
	}
	r.Sold, r.Refunded, r.Net = s.Money.Format(r.SoldCents), s.Money.Format(r.RefundedCents), s.Money.Format(r.NetCents)
	return r
}

// exportTill streams the till report's lines as CSV, one per member, day and method.
func (s *server) exportTill(c echo.Context) error {
	from, to, err := tillRange(c)
	if err != nil {
		return err
	}
	lines, err := s.Desk.Till(c.Request().Context(), from, to)
	if err != nil {
		return err
	}
	if c.Request().Method != http.MethodHead {
		if err := s.audit(c, "till.export", "till "+from.Format(dateLayout)+" "+to.Format(dateLayout), nil, nil); err != nil {
			return err
		}
	}
	h := c.Response().Header()
	h.Set(echo.HeaderContentType, "text/csv; charset=utf-8")
	h.Set(echo.HeaderContentDisposition, `attachment; filename="till-`+from.Format(dateLayout)+"-"+to.Format(dateLayout)+`.csv"`)
	if c.Request().Method == http.MethodHead {
		return c.NoContent(http.StatusOK)
	}
	c.Response().WriteHeader(http.StatusOK)
	w := csv.NewWriter(c.Response())
	err = w.Write([]string{"day", "time_zone", "staff", "method", "sales", "sold_cents", "refunds", "refunded_cents", "net_cents"})
	for _, l := range lines {
		if err != nil {
			break
		}
		err = w.Write([]string{l.Day.Format(dateLayout), l.Zone, csvSafe(l.StaffName), l.Method, strconv.Itoa(l.Sales),
			strconv.Itoa(l.SoldCents), strconv.Itoa(l.Refunds), strconv.Itoa(l.RefundedCents), strconv.Itoa(l.SoldCents - l.RefundedCents)})
	}
	return finishCSV(s, c, w, err)
}
