package booking

import (
	"context"
	"errors"
	"math"
	"time"

	"github.com/jackc/pgx/v5"

	"boxoffice/internal/db"
)

// Control is what the control room shows of one event's sale: counts by the database
// clock, in one snapshot.
type Control struct {
	Seats, SeatsSold, SeatsHeld int
	GACapacity, GASold, GAHeld  int
	LiveHolds                   int
	OrdersConfirmed             int
	RevenueCents                int64
	TicketsLastMinute           int
	QueueEnabled, QueuePaused   bool
	QueueSlots                  int
	QueueRate                   float64       // configured admissions per second
	QueueIdle                   time.Duration // how long an admission lasts with nothing held
}

// Control reads the control room's counts of an event; they may be a second stale
// (Services.SetReads).
func (s *Desk) Control(ctx context.Context, eventID int64) (Control, error) {
	r, err := s.stale().ControlCounts(ctx, eventID)
	if errors.Is(err, pgx.ErrNoRows) {
		return Control{}, ErrEventNotFound
	} else if err != nil {
		return Control{}, translate(err)
	}
	return Control{Seats: int(r.Seats), SeatsSold: int(r.SeatsSold), SeatsHeld: int(r.SeatsHeld),
		GACapacity: int(r.GaCapacity), GASold: int(r.GaSold), GAHeld: int(r.GaHeld), LiveHolds: int(r.LiveHolds),
		OrdersConfirmed: int(r.OrdersConfirmed), RevenueCents: r.RevenueCents, TicketsLastMinute: int(r.TicketsLastMinute),
		QueueEnabled: r.QueueEnabled, QueuePaused: r.QueuePaused, QueueSlots: int(r.QueueSlots), QueueRate: r.QueueRate,
		QueueIdle: time.Duration(r.QueueIdleSeconds) * time.Second}, nil
}

// MinuteCount is the tickets issued in one minute.
type MinuteCount struct {
	Minute  time.Time
	Tickets int
}

// TicketsByMinute is the tickets issued per minute since since, minutes without a
// sale left out.
func (s *Desk) TicketsByMinute(ctx context.Context, eventID int64, since time.Time) ([]MinuteCount, error) {
	rows, err := s.q.TicketsByMinute(ctx, db.TicketsByMinuteParams{EventID: eventID, Since: since})
	if err != nil {
		return nil, translate(err)
	}
	out := make([]MinuteCount, len(rows))
	for i, r := range rows {
		out[i] = MinuteCount{Minute: r.Minute, Tickets: int(r.Tickets)}
	}
	return out, nil
}

// MaxQueueRate bounds the admission rate the control room may set, per second.
const MaxQueueRate = 10_000

// MaxQueueSlots bounds the shoppers at a time the control room may set.
const MaxQueueSlots = 100_000

// ErrInvalidRate is a rate outside (0, MaxQueueRate].
var ErrInvalidRate = errors.New("booking: the admission rate must be above 0 and at most 10,000 a second")

// ErrInvalidSlots is a number of shoppers at a time outside [1, MaxQueueSlots].
var ErrInvalidSlots = errors.New("booking: shoppers at a time must be from 1 to 100,000")

// QueueControl is an event's room before and after a change.
type QueueControl struct {
	WasPaused, Paused bool
	WasRate, Rate     float64
	WasSlots, Slots   int
}

// queueChange is the shape of the rows the control queries return.
type queueChange = struct {
	WasPaused   bool
	WasRate     float64
	WasSlots    int32
	QueuePaused bool
	QueueRate   float64
	QueueSlots  int32
}

// queueControl maps a control query's answer; no row: no such event.
func queueControl[R ~queueChange](row R, err error) (QueueControl, error) {
	if errors.Is(err, pgx.ErrNoRows) {
		return QueueControl{}, ErrEventNotFound
	} else if err != nil {
		return QueueControl{}, translate(err)
	}
	r := queueChange(row)
	return QueueControl{WasPaused: r.WasPaused, Paused: r.QueuePaused, WasRate: r.WasRate, Rate: r.QueueRate,
		WasSlots: int(r.WasSlots), Slots: int(r.QueueSlots)}, nil
}

// SetQueuePaused pauses or resumes admission to an event's waiting room. The admitter
// reads it within its refresh period (a second); admitted shoppers are unaffected.
func (s *Desk) SetQueuePaused(ctx context.Context, eventID int64, paused bool) (QueueControl, error) {
	return queueControl(s.q.EventSetQueuePaused(ctx, db.EventSetQueuePausedParams{EventID: eventID, Paused: paused}))
}

// SetQueueRate sets how many shoppers a second the room admits.
func (s *Desk) SetQueueRate(ctx context.Context, eventID int64, rate float64) (QueueControl, error) {
	if !(rate > 0 && rate <= MaxQueueRate) || math.IsNaN(rate) {
		return QueueControl{}, ErrInvalidRate
	}
	return queueControl(s.q.EventSetQueueRate(ctx, db.EventSetQueueRateParams{EventID: eventID, Rate: rate}))
}

// SetQueueSlots sets how many shoppers the room admits at once. Fewer than are
// shopping now lets nobody more in until enough admissions end; none is cut short.
func (s *Desk) SetQueueSlots(ctx context.Context, eventID int64, slots int) (QueueControl, error) {
	if slots < 1 || slots > MaxQueueSlots {
		return QueueControl{}, ErrInvalidSlots
	}
	return queueControl(s.q.EventSetQueueSlots(ctx, db.EventSetQueueSlotsParams{EventID: eventID, Slots: int32(slots)}))
}
