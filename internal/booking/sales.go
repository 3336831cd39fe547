package booking

import (
	"context"
	"time"

	"boxoffice/internal/db"
	"boxoffice/internal/zone"
)

// EventSales is one event's sales for the box office's dashboard. Tickets are the
// valid ones; revenue is what confirmed orders were charged less what staff refunds
// gave back; "today" starts at midnight on the venue's clocks. Fees and tax are the
// parts of the revenue that the orders' lines charged as fees and tax and that no
// refund gave back.
type EventSales struct {
	EventID           int64
	Name              string
	Zone              *time.Location
	StartsAt          time.Time
	Capacity          int
	Tickets           int
	TicketsToday      int
	RevenueCents      int
	RevenueTodayCents int
	FeeCents          int
	TaxCents          int
}

// Left is how many seats and places are not sold (held ones included).
func (e EventSales) Left() int { return max(0, e.Capacity-e.Tickets) }

// DayCount is the valid tickets issued on one day (Day: the moment it starts).
type DayCount struct {
	Day     time.Time
	Tickets int
}

// Sales returns every event's sales, soonest first.
func (s *Desk) Sales(ctx context.Context) ([]EventSales, error) {
	rows, err := s.q.EventSales(ctx)
	if err != nil {
		return nil, translate(err)
	}
	out := make([]EventSales, len(rows))
	for i, r := range rows {
		out[i] = EventSales{EventID: r.ID, Name: r.Name, Zone: zone.Of(r.TimeZone), StartsAt: r.StartsAt,
			Capacity: int(r.Capacity), Tickets: int(r.Tickets), TicketsToday: int(r.TicketsToday),
			RevenueCents: int(r.RevenueCents), RevenueTodayCents: int(r.RevenueTodayCents),
			FeeCents: int(r.FeeCents), TaxCents: int(r.TaxCents)}
	}
	return out, nil
}

// TicketsByDay counts the valid tickets of the events issued since since, per day on
// the clocks of loc; days without any are left out.
func (s *Desk) TicketsByDay(ctx context.Context, events []int64, since time.Time, loc *time.Location) ([]DayCount, error) {
	rows, err := s.q.TicketsByDay(ctx, db.TicketsByDayParams{EventIds: events, Zone: loc.String(), Since: since})
	if err != nil {
		return nil, translate(err)
	}
	out := make([]DayCount, len(rows))
	for i, r := range rows {
		out[i] = DayCount{Day: r.Day, Tickets: int(r.Tickets)}
	}
	return out, nil
}
