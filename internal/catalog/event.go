package catalog

import (
	"context"
	"errors"
	"regexp"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"boxoffice/internal/db"
	"boxoffice/internal/dberr"
	"boxoffice/internal/staff"
)

// Queue is an event's waiting room settings.
type Queue struct {
	Enabled  bool
	Slots    int           // concurrent shoppers
	Rate     float64       // admissions per second
	TokenTTL time.Duration // how long an admission lasts; whole seconds
	Idle     time.Duration // how long an admission lasts without a hold; whole seconds
	// VerifiedOnly asks every buyer to confirm a registered email first: one place in
	// the queue and one buyer limit per email.
	VerifiedOnly bool
}

// Default waiting room settings, as the events table's defaults.
var defaultQueue = Queue{Slots: 500, Rate: 50, TokenTTL: 15 * time.Minute, Idle: 3 * time.Minute}

// Waiting room bounds: enough for any onsale, tight enough to catch a typo. The
// admin form counts an admission in whole minutes; the loader and the onsale
// simulator's short runs may use seconds.
const (
	MaxQueueSlots = 100_000
	MaxQueueRate  = 10_000
	MinTokenTTL   = 10 * time.Second
	MaxTokenTTL   = 2 * time.Hour
	// An admission's idle window: at or past its lifetime it never lapses first.
	MinIdle = time.Second
	MaxIdle = MaxTokenTTL
)

// EventInput is an event's settings. Zero SalesCloseAt closes the sale at the start;
// zero HoldMinutes keeps the program's hold time; a zero Queue's numbers take the
// defaults.
type EventInput struct {
	VenueID      int64 // ignored by UpdateEvent: the inventory was copied from it
	Slug         string
	Name         string
	StartsAt     time.Time
	OnsaleAt     time.Time
	SalesCloseAt time.Time
	HoldMinutes  int
	Published    bool // ignored by UpdateEvent: SetPublished changes it
	Queue        Queue
}

var slugPattern = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,79}$`)

// Slugify makes a page address from a name: "Demo Night!" → "demo-night".
func Slugify(name string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(name) {
		switch {
		case r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			dash = false
			b.WriteRune(r)
		default:
			dash = true
		}
		if b.Len() >= 60 {
			break
		}
	}
	return b.String()
}

func (e *EventInput) normalise(create bool) error {
	e.Name = strings.TrimSpace(e.Name)
	if err := checkName("name", "event", e.Name); err != nil {
		return err
	}
	if create {
		e.Slug = strings.TrimSpace(e.Slug)
		if e.Slug == "" {
			e.Slug = Slugify(e.Name)
		}
		if !slugPattern.MatchString(e.Slug) {
			return invalid("slug", "the address %q must be lower-case letters, digits and dashes, starting with a letter or digit", e.Slug)
		}
	}
	if e.StartsAt.IsZero() {
		return invalid("startsAt", "give the date and time the event starts")
	}
	if e.OnsaleAt.IsZero() {
		return invalid("onsaleAt", "give the time sales open")
	}
	closeAt := e.SalesCloseAt
	if closeAt.IsZero() {
		closeAt = e.StartsAt
	}
	if !closeAt.After(e.OnsaleAt) {
		return invalid("salesCloseAt", "sales must close after they open")
	}
	if closeAt.After(e.StartsAt) {
		return invalid("salesCloseAt", "sales must close when the event starts or before")
	}
	if e.HoldMinutes != 0 && (e.HoldMinutes < 1 || e.HoldMinutes > 60) {
		return invalid("holdMinutes", "a hold lasts between 1 and 60 minutes")
	}
	q := &e.Queue
	if q.Slots == 0 {
		q.Slots = defaultQueue.Slots
	}
	if q.Rate == 0 {
		q.Rate = defaultQueue.Rate
	}
	if q.TokenTTL == 0 {
		q.TokenTTL = defaultQueue.TokenTTL
	}
	if q.Idle == 0 {
		q.Idle = defaultQueue.Idle
	}
	if q.Slots < 1 || q.Slots > MaxQueueSlots {
		return invalid("queueSlots", "shoppers at a time must be between 1 and %d", MaxQueueSlots)
	}
	if !(q.Rate > 0 && q.Rate <= MaxQueueRate) { // also refuses NaN
		return invalid("queueRate", "admissions per second must be above 0 and at most %d", MaxQueueRate)
	}
	if q.TokenTTL < MinTokenTTL || q.TokenTTL > MaxTokenTTL || q.TokenTTL%time.Second != 0 {
		return invalid("queueTokenTTL", "an admission lasts between %v and %v, in whole seconds", MinTokenTTL, MaxTokenTTL)
	}
	if q.Idle < MinIdle || q.Idle > MaxIdle || q.Idle%time.Second != 0 {
		return invalid("queueIdle", "a turn with nothing held lapses after between %v and %v, in whole seconds", MinIdle, MaxIdle)
	}
	return nil
}

func (e EventInput) closeParam() *time.Time {
	if e.SalesCloseAt.IsZero() {
		return nil
	}
	return &e.SalesCloseAt
}

func (e EventInput) holdParam() *int32 {
	if e.HoldMinutes == 0 {
		return nil
	}
	m := int32(e.HoldMinutes)
	return &m
}

// CreateEvent creates an event at a venue and copies the venue's layout as its
// inventory: price tiers, seats, standing tiers with their stripes.
func (s *Service) CreateEvent(ctx context.Context, by Actor, e EventInput) (int64, error) {
	if err := e.normalise(true); err != nil {
		return 0, err
	}
	var id int64
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var err error
		id, err = createEvent(ctx, tx, by, e)
		return err
	})
	if err != nil {
		return 0, dberr.Translate(err)
	}
	return id, s.analyze(ctx)
}

// CreateVenueEvent creates a venue and an event there in one transaction: the demo
// loader's and the tests' way to make a ready event.
func (s *Service) CreateVenueEvent(ctx context.Context, by Actor, v VenueInput, e EventInput) (int64, error) {
	seats, err := v.validate()
	if err != nil {
		return 0, err
	}
	if err := e.normalise(true); err != nil {
		return 0, err
	}
	var id int64
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		venueID, err := createVenue(ctx, tx, by, v, seats)
		if err != nil {
			return err
		}
		e.VenueID = venueID
		id, err = createEvent(ctx, tx, by, e)
		return err
	})
	if err != nil {
		return 0, dberr.Translate(err)
	}
	return id, s.analyze(ctx)
}

// analyze tells the planner about the seats that just arrived. Until its statistics
// know them, it plans each claim as if the event had one seat and reads the whole
// event instead (measured: best available at 6 holds/s instead of 150). Autovacuum
// would catch up within a minute; an onsale may start sooner.
func (s *Service) analyze(ctx context.Context) error {
	_, err := s.pool.Exec(ctx, "ANALYZE seats")
	return dberr.Translate(err)
}

// eventAudit is what the audit log keeps of an event's settings.
type eventAudit struct {
	VenueID      int64     `json:"venueId"`
	Slug         string    `json:"slug"`
	Name         string    `json:"name"`
	StartsAt     time.Time `json:"startsAt"`
	OnsaleAt     time.Time `json:"onsaleAt"`
	SalesCloseAt time.Time `json:"salesCloseAt,omitzero"`
	HoldMinutes  int       `json:"holdMinutes,omitempty"`
	Published    bool      `json:"published"`
	Queue        bool      `json:"queue"`
	QueueSlots   int       `json:"queueSlots"`
	QueueRate    float64   `json:"queueRate"`
	QueueTTL     int       `json:"queueTokenTtlSeconds"`
	QueueIdle    int       `json:"queueIdleSeconds"`
	VerifiedOnly bool      `json:"verifiedOnly,omitempty"`
}

func auditOfEvent(e EventInput) eventAudit {
	return eventAudit{VenueID: e.VenueID, Slug: e.Slug, Name: e.Name, StartsAt: e.StartsAt.UTC(), OnsaleAt: e.OnsaleAt.UTC(),
		SalesCloseAt: e.SalesCloseAt.UTC(), HoldMinutes: e.HoldMinutes, Published: e.Published,
		Queue: e.Queue.Enabled, QueueSlots: e.Queue.Slots, QueueRate: e.Queue.Rate, QueueTTL: int(e.Queue.TokenTTL / time.Second),
		QueueIdle: int(e.Queue.Idle / time.Second), VerifiedOnly: e.Queue.VerifiedOnly}
}

// createEvent inserts the event and copies its venue's layout in tx.
func createEvent(ctx context.Context, tx pgx.Tx, by Actor, e EventInput) (int64, error) {
	q := db.New(tx)
	if _, err := q.VenueGetForUpdate(ctx, e.VenueID); errors.Is(err, pgx.ErrNoRows) {
		return 0, invalid("venueId", "choose a venue")
	} else if err != nil {
		return 0, err
	}
	id, err := q.EventCreateFull(ctx, db.EventCreateFullParams{
		VenueID: e.VenueID, Slug: e.Slug, Name: e.Name, StartsAt: e.StartsAt, OnsaleAt: e.OnsaleAt,
		SalesCloseAt: e.closeParam(), HoldMinutes: e.holdParam(), Published: e.Published,
		QueueEnabled: e.Queue.Enabled, QueueSlots: int32(e.Queue.Slots), QueueRate: e.Queue.Rate,
		QueueTokenTtlSeconds: int32(e.Queue.TokenTTL / time.Second), QueueIdleSeconds: int32(e.Queue.Idle / time.Second),
		VerifiedOnly: e.Queue.VerifiedOnly,
	})
	if dberr.IsUniqueViolation(err) {
		return 0, invalid("slug", "another event has the address %q; choose another", e.Slug)
	} else if err != nil {
		return 0, err
	}
	if err := q.EventTiersFromLayout(ctx, db.EventTiersFromLayoutParams{EventID: id, VenueID: e.VenueID}); err != nil {
		return 0, err
	}
	seats, err := q.EventSeatsFromLayout(ctx, db.EventSeatsFromLayoutParams{EventID: id, VenueID: e.VenueID})
	if err != nil {
		return 0, err
	}
	ga, err := q.EventGATiersFromLayout(ctx, db.EventGATiersFromLayoutParams{EventID: id, VenueID: e.VenueID})
	if err != nil {
		return 0, err
	}
	if seats == 0 && len(ga) == 0 {
		return 0, invalid("venueId", "the venue has no seats and no standing areas; give it a layout first")
	}
	for _, t := range ga {
		stripes := make([]int32, t.Stripes)
		remaining := make([]int32, t.Stripes)
		for i := range stripes {
			stripes[i] = int32(i)
			remaining[i] = t.Capacity / t.Stripes
			if int32(i) < t.Capacity%t.Stripes {
				remaining[i]++
			}
		}
		if err := q.GAStripesInit(ctx, db.GAStripesInitParams{EventID: id, TierID: t.ID, Stripes: stripes, Remaining: remaining}); err != nil {
			return 0, err
		}
	}
	return id, staff.Audit(ctx, tx, by.StaffID, "event.create", eventSubject(id), nil, auditOfEvent(e), by.Address)
}

// UpdateEvent changes an event's settings. Its venue and inventory stay as they are.
func (s *Service) UpdateEvent(ctx context.Context, by Actor, id int64, e EventInput) error {
	if err := e.normalise(false); err != nil {
		return err
	}
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		q := db.New(tx)
		old, err := lockEvent(ctx, q, id)
		if err != nil {
			return err
		}
		before := eventOfRow(db.EventAdminGetRow(old)).Input()
		e.VenueID, e.Slug, e.Published = before.VenueID, before.Slug, before.Published
		if _, err := q.EventUpdate(ctx, db.EventUpdateParams{
			ID: id, Name: e.Name, StartsAt: e.StartsAt, OnsaleAt: e.OnsaleAt, SalesCloseAt: e.closeParam(),
			HoldMinutes: e.holdParam(), QueueEnabled: e.Queue.Enabled, QueueSlots: int32(e.Queue.Slots),
			QueueRate: e.Queue.Rate, QueueTokenTtlSeconds: int32(e.Queue.TokenTTL / time.Second),
			QueueIdleSeconds: int32(e.Queue.Idle / time.Second),
			VerifiedOnly:     e.Queue.VerifiedOnly,
		}); err != nil {
			return err
		}
		return staff.Audit(ctx, tx, by.StaffID, "event.update", eventSubject(id), auditOfEvent(before), auditOfEvent(e), by.Address)
	})
	return dberr.Translate(err)
}

// lockEvent reads the event's row and locks it: two editors of one event take turns.
func lockEvent(ctx context.Context, q *db.Queries, id int64) (db.EventAdminGetForUpdateRow, error) {
	old, err := q.EventAdminGetForUpdate(ctx, id)
	if errors.Is(err, pgx.ErrNoRows) {
		return old, ErrEventNotFound
	}
	return old, err
}

// SetPublished publishes or withdraws an event: an unpublished event is absent from
// the public pages and the API's list, and refuses holds.
func (s *Service) SetPublished(ctx context.Context, by Actor, id int64, published bool) error {
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		q := db.New(tx)
		old, err := lockEvent(ctx, q, id)
		if err != nil {
			return err
		}
		if _, err := q.EventPublishSet(ctx, db.EventPublishSetParams{ID: id, Published: published}); err != nil {
			return err
		}
		action := "event.unpublish"
		if published {
			action = "event.publish"
		}
		return staff.Audit(ctx, tx, by.StaffID, action, eventSubject(id),
			map[string]bool{"published": old.Published}, map[string]bool{"published": published}, by.Address)
	})
	return dberr.Translate(err)
}
