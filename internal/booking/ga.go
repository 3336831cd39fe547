package booking

import (
	"context"
	"errors"
	"math/rand/v2"

	"github.com/jackc/pgx/v5"

	"boxoffice/internal/db"
)

// takeGA takes quantity places of a tier for a hold. The fast path is one conditional
// statement on one stripe chosen from a random start, skipping stripes that are busy;
// only when no single stripe can serve it does it lock all the tier's stripes (in
// stripe order, the one order every multi-stripe statement uses) and take from several.
// The stripes' CHECK (remaining >= 0) backstops both.
func (s *Service) takeGA(ctx context.Context, tx pgx.Tx, q *db.Queries, eventID, holdID, tierID int64, quantity int) error {
	stripe, err := q.GATakeFromOne(ctx, db.GATakeFromOneParams{
		EventID: eventID, TierID: tierID, Quantity: int32(quantity), Start: int32(rand.IntN(64)),
	})
	if err == nil {
		return q.HoldGAPlaceAdd(ctx, db.HoldGAPlaceAddParams{
			EventID: eventID, HoldID: holdID, TierID: tierID, Stripe: stripe, Quantity: int32(quantity),
		})
	}
	if !errors.Is(err, pgx.ErrNoRows) {
		return err
	}
	stripes, err := q.GAStripesLock(ctx, db.GAStripesLockParams{EventID: eventID, TierID: tierID})
	if err != nil {
		return err
	}
	total := 0
	for _, st := range stripes {
		total += int(st.Remaining)
	}
	if total < quantity {
		return ErrSoldOut
	}
	need := quantity
	for _, st := range stripes {
		take := min(need, int(st.Remaining))
		if take == 0 {
			continue
		}
		n, err := q.GAStripeTake(ctx, db.GAStripeTakeParams{EventID: eventID, TierID: tierID, Stripe: st.Stripe, Quantity: int32(take)})
		if err != nil {
			return err
		}
		if n != 1 {
			return ErrSoldOut // cannot happen under the lock; never oversell if it does
		}
		if err := q.HoldGAPlaceAdd(ctx, db.HoldGAPlaceAddParams{
			EventID: eventID, HoldID: holdID, TierID: tierID, Stripe: st.Stripe, Quantity: int32(take),
		}); err != nil {
			return err
		}
		if need -= take; need == 0 {
			break
		}
	}
	return nil
}

// giveBackGA returns a hold's places to the stripes they came from, stripe by stripe in
// stripe order.
func (s *Service) giveBackGA(ctx context.Context, q *db.Queries, eventID, holdID int64) error {
	places, err := q.HoldGAPlaces(ctx, db.HoldGAPlacesParams{EventID: eventID, HoldID: holdID})
	if err != nil {
		return err
	}
	for _, p := range places {
		if err := q.GAStripeGive(ctx, db.GAStripeGiveParams{
			EventID: eventID, TierID: p.TierID, Stripe: p.Stripe, Quantity: p.Quantity,
		}); err != nil {
			return err
		}
	}
	return q.HoldGAPlacesClear(ctx, db.HoldGAPlacesClearParams{EventID: eventID, HoldID: holdID})
}
