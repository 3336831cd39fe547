package benchkit

import (
	"context"
	"crypto/rand"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"

	"boxoffice/internal/demo"
	"boxoffice/internal/live"
	"boxoffice/internal/pricedemo"
	"boxoffice/internal/waitroom"
)

// Queue is an event's waiting room: shoppers at a time, admissions a second and how
// long an admission lasts.
type Queue = demo.Queue

// Event is an event a measurement sells: about Seats seats in sections of 50 rows of
// 50, priced dearest at the front, and a standing field of a fifth as many places.
type Event struct {
	Slug  string
	Seats int
	// OnsaleAt is when it goes on sale; zero: an hour ago.
	OnsaleAt time.Time
	// Queue, if set, turns its waiting room on.
	Queue *Queue
	// Pricing gives it the price list of a real onsale (internal/pricedemo): ticket
	// types, fees, tax and the vouchers VoucherPercent and VoucherLimited.
	Pricing bool
}

// The vouchers an event with Pricing has: VoucherPercent takes a share off, as often
// as it is entered; VoucherLimited an amount, VoucherLimitedUses times in all.
const (
	VoucherPercent     = pricedemo.PercentCode
	VoucherLimited     = pricedemo.LimitedCode
	VoucherLimitedUses = pricedemo.LimitedUses
)

// CreateEvent creates the event through the catalog, as staff would, and returns its
// id.
func CreateEvent(ctx context.Context, db *pgxpool.Pool, e Event) (int64, error) {
	spec := demo.BigSpec(e.Slug, e.Seats, time.Now())
	if !e.OnsaleAt.IsZero() {
		spec.OnsaleAt = e.OnsaleAt
	}
	spec.Queue = e.Queue
	id, err := demo.Create(ctx, db, spec)
	if err != nil {
		return 0, fmt.Errorf("create event %s: %w", e.Slug, err)
	}
	if e.Pricing {
		if _, err := pricedemo.Apply(ctx, db, id); err != nil {
			return 0, fmt.Errorf("price event %s: %w", e.Slug, err)
		}
	}
	return id, nil
}

// Room is the program's waiting room (waitroom.Room), for the measurements that
// drive it without the program around it.
type Room = waitroom.Room

// RoomEvent is what the waiting room knows of an event.
type RoomEvent = waitroom.Event

// NewRoom is a waiting room on rdb under prefix, its scripts loaded, signing its
// admissions with a key of its own.
func NewRoom(ctx context.Context, rdb redis.UniversalClient, prefix string) (*Room, error) {
	room := waitroom.New(rdb, prefix, []waitroom.Key{{ID: "bench", Secret: []byte(rand.Text())}},
		waitroom.Hooks{}, slog.New(slog.DiscardHandler), waitroom.Options{})
	return room, room.LoadScripts(ctx)
}

// RoomEventOf is the waiting room's view of event id, going on sale at onsaleAt with
// room q.
func RoomEventOf(id int64, onsaleAt time.Time, q Queue) RoomEvent {
	return waitroom.Event{ID: id, OnsaleAt: onsaleAt,
		Settings: waitroom.Settings{Enabled: true, Slots: q.Slots, Rate: q.Rate, TokenTTL: q.TokenTTL, Idle: q.Idle}}
}

// ShownRate is the waiting room's own rule for the rate an ETA assumes
// (waitroom.ShownRate), for the replay of an onsale's waits.
func ShownRate(measured, present, configured float64) float64 {
	return waitroom.ShownRate(measured, present, configured)
}

// ClimbMean is the mean share of the configured rate over the ETA's horizon of a
// governor climbing back from share now (waitroom.ClimbMean).
func ClimbMean(now float64) float64 { return waitroom.ClimbMean(now) }

// Notice is how long after its turn a waiting page learns of it; every ETA the room
// shows includes it (waitroom.Notice).
const Notice = waitroom.Notice

// SeatChange is one message of an event's live seat channel.
type SeatChange = live.Change

// Subscribe is a subscription of its own to the event's seat changes, as an outsider
// listens.
func Subscribe(ctx context.Context, rdb redis.UniversalClient, prefix string, eventID int64) *redis.PubSub {
	return live.Subscribe(ctx, rdb, prefix, eventID)
}

// Publisher announces seat changes on the live channels, as the program does after
// a commit.
type Publisher = live.Publisher

// NewPublisher is a publisher on rdb under prefix.
func NewPublisher(rdb redis.UniversalClient, prefix string) *Publisher {
	return live.NewPublisher(rdb, prefix, slog.New(slog.DiscardHandler))
}
