package web

import (
	"encoding/csv"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"boxoffice/internal/booking"
	"boxoffice/internal/checkin"
	"boxoffice/internal/zone"
)

// CSV exports of an event's orders and check-ins, streamed a page of rows
// at a time (encoding/csv) as an attachment. Text that a buyer or staff typed (emails,
// gate names, codes typed at the door) is guarded against formula injection: a
// spreadsheet would run a cell starting with =, +, -, @, a tab or a carriage return
// as a formula, so such a cell is prefixed with an apostrophe, as OWASP advises.

// csvSafe makes a cell of typed text safe to open in a spreadsheet.
func csvSafe(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}

// csvTime is a moment in a CSV cell: RFC 3339 on the clocks of the event's zone loc,
// its offset written out, "" for none. The last column of every row names the zone.
func csvTime(t *time.Time, loc *time.Location) string {
	if t == nil || t.IsZero() {
		return ""
	}
	return zone.ISO(*t, loc)
}

// startExport begins one of the event's CSV files ("<name>-<slug>.csv"). A HEAD asks
// about the file: it gets the headers alone, and nothing is read or audited (w is nil).
// A GET is audited first (who took the buyers' data away, and when), so that a failed
// audit is an error page rather than a file, then the headers and the header row go out.
func (s *server) startExport(c echo.Context, ev booking.Event, name, action string, header []string) (*csv.Writer, error) {
	if c.Request().Method != http.MethodHead {
		if err := s.audit(c, action, "event "+strconv.FormatInt(ev.ID, 10), nil, nil); err != nil {
			return nil, err
		}
	}
	h := c.Response().Header()
	h.Set(echo.HeaderContentType, "text/csv; charset=utf-8")
	h.Set(echo.HeaderContentDisposition, `attachment; filename="`+name+"-"+ev.Slug+`.csv"`)
	if c.Request().Method == http.MethodHead {
		return nil, c.NoContent(http.StatusOK)
	}
	c.Response().WriteHeader(http.StatusOK)
	w := csv.NewWriter(c.Response())
	return w, w.Write(header)
}

// exportOrders streams the event's orders as CSV.
func (s *server) exportOrders(c echo.Context) error {
	ev, err := s.adminEvent(c)
	if err != nil {
		return err
	}
	w, err := s.startExport(c, ev, "orders", "event.export_orders", []string{"order", "email", "status", "reason",
		"amount_cents", "refunded_cents", "valid_tickets", "void_tickets", "created_at", "confirmed_at", "time_zone"})
	if w == nil || err != nil {
		return err
	}
	err = s.Desk.ExportOrders(c.Request().Context(), ev.ID, func(o booking.ExportOrder) error {
		return w.Write([]string{strconv.FormatInt(o.ID, 10), csvSafe(o.Email), o.Status, o.StatusReason,
			strconv.Itoa(o.AmountCents), strconv.Itoa(o.RefundedCents), strconv.Itoa(o.ValidTickets),
			strconv.Itoa(o.VoidTickets), csvTime(&o.CreatedAt, ev.Zone), csvTime(o.ConfirmedAt, ev.Zone), ev.Zone.String()})
	})
	return finishCSV(s, c, w, err)
}

// exportCheckins streams the event's scans at the door as CSV.
func (s *server) exportCheckins(c echo.Context) error {
	ev, err := s.adminEvent(c)
	if err != nil {
		return err
	}
	w, err := s.startExport(c, ev, "checkins", "event.export_checkins",
		[]string{"scan", "at", "gate", "code", "result", "staff", "ticket", "order", "time_zone"})
	if w == nil || err != nil {
		return err
	}
	err = s.Door.ExportLog(c.Request().Context(), ev.ID, func(e checkin.LogEntry) error {
		ticket, order := "", ""
		if e.TicketID != 0 {
			ticket = strconv.FormatInt(e.TicketID, 10)
		}
		if e.OrderID != 0 {
			order = strconv.FormatInt(e.OrderID, 10)
		}
		return w.Write([]string{strconv.FormatInt(e.ID, 10), csvTime(&e.At, ev.Zone), csvSafe(e.Gate), csvSafe(e.Code),
			string(e.Result), csvSafe(e.StaffName), ticket, order, ev.Zone.String()})
	})
	return finishCSV(s, c, w, err)
}

// finishCSV flushes the export. Once rows are sent the status cannot change: an
// error then is logged, and the file ends without its last rows.
func finishCSV(s *server, c echo.Context, w *csv.Writer, err error) error {
	w.Flush()
	if err == nil {
		err = w.Error()
	}
	if err != nil && !errors.Is(err, c.Request().Context().Err()) {
		s.Log.ErrorContext(c.Request().Context(), "export cut short", "path", c.Request().URL.Path, "err", err)
	}
	return nil
}
