package booking

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"boxoffice/internal/db"
	"boxoffice/internal/pricing"
	"boxoffice/internal/staff"
)

// AccessCodeInput is a new access code as staff set it: the presale window, a quota
// of places (0: none) and a code-only type it reveals (0: none).
type AccessCodeInput struct {
	Code          string
	Starts, Ends  time.Time
	Quota         int
	RevealsTypeID int64
}

func (in AccessCodeInput) validate() error {
	switch {
	case !codePattern.MatchString(in.Code):
		return InvalidPricing("a code is 3 to 40 letters, digits or dashes")
	case in.Starts.IsZero() || in.Ends.IsZero():
		return InvalidPricing("a presale needs a start and an end")
	case !in.Ends.After(in.Starts):
		return InvalidPricing("a presale must end after it starts")
	case in.Quota < 0 || in.Quota > 10_000_000:
		return InvalidPricing("the quota is a whole number of places from 0 (none) to 10,000,000")
	}
	return nil
}

// CreateAccessCode makes an access code for an event, with its audit entry.
func (s *Desk) CreateAccessCode(ctx context.Context, eventID int64, in AccessCodeInput, by Actor) (int64, error) {
	in.Code = NormalCode(in.Code)
	if err := in.validate(); err != nil {
		return 0, err
	}
	var id int64
	err := s.inTx(ctx, func(tx pgx.Tx, q *db.Queries) error {
		var reveals []int64
		var revealsID *int64
		if in.RevealsTypeID != 0 {
			reveals, revealsID = []int64{in.RevealsTypeID}, &in.RevealsTypeID
		}
		if err := typesOfEvent(ctx, q, eventID, reveals...); err != nil {
			return err
		}
		var err error
		id, err = q.AccessCodeCreate(ctx, db.AccessCodeCreateParams{EventID: eventID, Code: in.Code, PresaleStartsAt: in.Starts,
			PresaleEndsAt: in.Ends, Quota: nonZero(in.Quota), RevealsTypeID: revealsID})
		if errors.Is(err, pgx.ErrNoRows) {
			return InvalidPricing("this event already has an access code %s", in.Code)
		} else if err != nil {
			return err
		}
		return staff.Audit(ctx, tx, by.StaffID, "access_code.create", PricingSubject(eventID), nil, in, by.Address)
	})
	return id, err
}

// AccessCodeRow is an access code as the staff's list shows it.
type AccessCodeRow struct {
	pricing.AccessCode
	RevealsName string
	Created     time.Time
}

// AccessCodes lists an event's access codes by code, with the places they sold.
func (s *Desk) AccessCodes(ctx context.Context, eventID int64) ([]AccessCodeRow, error) {
	rows, err := s.q.AccessCodeList(ctx, eventID)
	if err != nil {
		return nil, translate(err)
	}
	out := make([]AccessCodeRow, len(rows))
	for i, r := range rows {
		out[i] = AccessCodeRow{AccessCode: accessCodeOf(r.ID, r.Code, r.PresaleStartsAt, r.PresaleEndsAt, r.Quota, r.PlacesUsed, r.RevealsTypeID, r.Paused),
			RevealsName: r.RevealsType, Created: r.CreatedAt}
	}
	return out, nil
}

func accessCodeOf(id int64, code string, starts, ends time.Time, quota *int32, used int32, reveals *int64, paused bool) pricing.AccessCode {
	a := pricing.AccessCode{ID: id, Code: code, PresaleStarts: starts, PresaleEnds: ends, Used: int(used), Paused: paused}
	if quota != nil {
		a.Quota = int(*quota)
	}
	if reveals != nil {
		a.RevealsType = *reveals
	}
	return a
}

// accessCodeByCode finds an event's access code by the code a buyer typed; false: none.
func (s *store) accessCodeByCode(ctx context.Context, q *db.Queries, eventID int64, code string) (pricing.AccessCode, bool, error) {
	r, err := q.AccessCodeByCode(ctx, db.AccessCodeByCodeParams{EventID: eventID, Code: NormalCode(code)})
	if errors.Is(err, pgx.ErrNoRows) {
		return pricing.AccessCode{}, false, nil
	} else if err != nil {
		return pricing.AccessCode{}, false, translate(err)
	}
	return accessCodeOf(r.ID, r.Code, r.PresaleStartsAt, r.PresaleEndsAt, r.Quota, r.PlacesUsed, r.RevealsTypeID, r.Paused), true, nil
}

// SetAccessCodePaused pauses an access code (it opens nothing and its places are
// refused at confirmation) or resumes it.
func (s *Desk) SetAccessCodePaused(ctx context.Context, eventID, id int64, paused bool, by Actor) error {
	return s.setPaused(ctx, "access_code.pause", eventID, id, paused, by, func(q *db.Queries) (int64, error) {
		return q.AccessCodeSetPaused(ctx, db.AccessCodeSetPausedParams{EventID: eventID, ID: id, Paused: paused})
	})
}

// useAccessCode takes places of access code codeID's quota for order orderID, in the
// caller's transaction at confirmation (countCode): true if the code is not paused and
// the places fit its quota, by one conditional statement (AccessCodeUse).
func useAccessCode(ctx context.Context, q *db.Queries, eventID, codeID, orderID int64, places int) (bool, error) {
	n, err := q.AccessCodeUse(ctx, db.AccessCodeUseParams{EventID: eventID, CodeID: codeID, OrderID: orderID, Places: int32(places)})
	return n == 1, translate(err)
}
