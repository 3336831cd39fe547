package booking

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"boxoffice/internal/db"
	"boxoffice/internal/pricing"
)

// Presales. A buyer enters an access code for an event (EnterAccessCode); the web
// layer remembers it in the buyer's session and puts its id in every hold request
// (HoldRequest.AccessCode). The holding statements decide the rest by the database
// clock, in the statement that claims (migrations/functions/presale.sql): before the
// onsale an open code opens the sale for its quota of places, the hold records the
// code, and checkout and payment accept a hold made in its presale
// (event_on_sale_with). HoldAccessCode tells pricing which code a hold was made with.

var (
	// ErrAccessCodeUnknown means the event has no such access code.
	ErrAccessCodeUnknown = errors.New("no such access code for this event")
	// ErrAccessCodePaused means staff paused the code: it opens nothing.
	ErrAccessCodePaused = errors.New("this access code is paused")
	// ErrAccessCodeEnded means the code's presale is over.
	ErrAccessCodeEnded = errors.New("this access code's presale has ended")
)

// EnterAccessCode checks a code a buyer typed for the event: it is the event's, not
// paused, and its presale has not ended (by the database clock). A code whose presale
// has not begun yet is accepted: it opens the sale when its presale begins. Only the
// holding statements decide what the code opens; this says whether it is worth
// remembering.
func (s *Buyer) EnterAccessCode(ctx context.Context, eventID int64, code string) (AccessCodeEntered, error) {
	code = NormalCode(code)
	if !codePattern.MatchString(code) {
		return AccessCodeEntered{}, ErrAccessCodeUnknown
	}
	r, err := s.q.AccessCodeCheck(ctx, db.AccessCodeCheckParams{EventID: eventID, Code: code})
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return AccessCodeEntered{}, ErrAccessCodeUnknown
	case err != nil:
		return AccessCodeEntered{}, translate(err)
	case r.Paused:
		return AccessCodeEntered{}, ErrAccessCodePaused
	case r.Ended:
		return AccessCodeEntered{}, ErrAccessCodeEnded
	}
	return AccessCodeEntered{ID: r.ID, Code: r.Code, PresaleStarts: r.PresaleStartsAt, PresaleEnds: r.PresaleEndsAt}, nil
}

// AccessCodeEntered is an access code a buyer entered that checked out: its id, for
// the hold requests (HoldRequest.AccessCode), and its presale window.
type AccessCodeEntered struct {
	ID                         int64
	Code                       string
	PresaleStarts, PresaleEnds time.Time
}

// HoldAccessCode is the access code the buyer's hold records: the presale it was made
// in, whose revealed type pricing offers (pricing.Basket.Code). found is false when
// the hold records none, or is not the buyer's.
func (s *Buyer) HoldAccessCode(ctx context.Context, id HoldID, buyer string) (code pricing.AccessCode, found bool, err error) {
	return s.holdAccessCode(ctx, s.q, id, buyer)
}

// holdAccessCode is HoldAccessCode on q, for callers in a transaction.
func (s *store) holdAccessCode(ctx context.Context, q *db.Queries, id HoldID, buyer string) (pricing.AccessCode, bool, error) {
	r, err := q.HoldAccessCode(ctx, db.HoldAccessCodeParams{EventID: id.Event, HoldID: id.Seq, Buyer: buyer})
	if errors.Is(err, pgx.ErrNoRows) {
		return pricing.AccessCode{}, false, nil
	} else if err != nil {
		return pricing.AccessCode{}, false, translate(err)
	}
	return accessCodeOf(r.ID, r.Code, r.PresaleStartsAt, r.PresaleEndsAt, r.Quota, r.PlacesUsed, r.RevealsTypeID, r.Paused), true, nil
}
