package booking

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5/pgtype"

	"boxoffice/internal/db"
)

// The till report: what each member of staff took at the window and gave back, per
// day and method, so that the day's cash can be counted against it. A day is a date
// on the clocks of the event's venue.

// TillLine is what one member took and gave back on one day by one method: cash,
// card_present, or card (a refund through the payment provider; sales online are no
// member's).
type TillLine struct {
	Day           time.Time // the date, at midnight UTC
	Zone          string    // the venues' IANA zone the day is in
	StaffID       int64
	StaffName     string
	Method        string
	Sales         int
	SoldCents     int
	Refunds       int
	RefundedCents int
}

// MaxTillDays bounds the days one till report covers.
const MaxTillDays = 366

// zoneReach is how far a venue's clock may be from UTC (UTC-12 to UTC+14), with room:
// a day's moments lie within it of that date in UTC.
const zoneReach = 15 * time.Hour

// Till returns the till's lines from the date from to the date to (both whole days,
// dates at midnight UTC), newest day first, then by member and method.
func (s *Desk) Till(ctx context.Context, from, to time.Time) ([]TillLine, error) {
	if to.Before(from) || to.Sub(from) > MaxTillDays*24*time.Hour {
		return nil, invalid(ErrInvalidTill, "choose a range of 1 to %d days, the first day first", MaxTillDays)
	}
	rows, err := s.q.TillReport(ctx, db.TillReportParams{
		FromDay: pgtype.Date{Time: from, Valid: true}, ToDay: pgtype.Date{Time: to, Valid: true},
		FromAt: from.Add(-zoneReach), ToAt: to.Add(24*time.Hour + zoneReach),
	})
	if err != nil {
		return nil, translate(err)
	}
	out := make([]TillLine, 0, len(rows))
	for _, r := range rows {
		out = append(out, TillLine{Day: r.Day.Time, Zone: r.TimeZone, StaffID: r.StaffID, StaffName: r.StaffName,
			Method: r.Method, Sales: int(r.Sales), SoldCents: int(r.SoldCents), Refunds: int(r.Refunds),
			RefundedCents: int(r.RefundedCents)})
	}
	return out, nil
}

// ErrInvalidTill: the till report's range is backwards or too long.
var ErrInvalidTill = errors.New("invalid till report range")
