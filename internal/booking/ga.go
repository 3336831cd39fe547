package booking

import (
	"cmp"
	"context"
	"maps"
	"math/rand/v2"
	"slices"

	"github.com/jackc/pgx/v5"

	"boxoffice/internal/db"
)

// takeSavepoint is the savepoint a take from one stripe is rolled back to.
const takeSavepoint = "ga_take"

// takeGA takes quantity places of a tier for a hold. The fast path is one conditional
// statement on one stripe chosen from a random start, skipping stripes that are busy;
// only when no single stripe can serve it does it lock all the tier's stripes (in
// stripe order, the one order every multi-stripe statement uses) and take from several.
// The stripes' CHECK (remaining >= 0) backstops both.
//
// The fast path runs in a savepoint, rolled back when it takes nothing. A stripe whose
// row another transaction changed between the statement's snapshot and its lock is
// locked, found short on the recheck and skipped, and PostgreSQL keeps that lock to
// the end of the transaction: two buyers each left holding such a stripe, then locking
// all the stripes in order, deadlocked (TestGAConcurrent, 2 runs in 10). Rolling back
// the savepoint lets the stray lock go.
func (s *store) takeGA(ctx context.Context, tx pgx.Tx, q *db.Queries, eventID, holdID, tierID int64, stripes, quantity int) error {
	// One round trip: a savepoint, then the take from one stripe; rolled back to it if
	// none had enough.
	var pl db.Pipeline
	pl.Savepoint(takeSavepoint)
	one := pl.GATakeFromOne(db.GATakeFromOneParams{
		EventID: eventID, TierID: tierID, Quantity: int32(quantity), Start: int32(rand.IntN(max(stripes, 1))),
	})
	if err := pl.Send(ctx, tx); err != nil {
		return err
	}
	if one.Found {
		return q.HoldGAPlaceAdd(ctx, db.HoldGAPlaceAddParams{
			EventID: eventID, HoldID: holdID, TierID: tierID, Stripe: one.Val, Quantity: int32(quantity),
		})
	}
	if err := db.RollbackTo(ctx, tx, takeSavepoint); err != nil {
		return err
	}
	locked, err := q.GAStripesLock(ctx, db.GAStripesLockParams{EventID: eventID, TierID: tierID})
	if err != nil {
		return err
	}
	total := 0
	for _, st := range locked {
		total += int(st.Remaining)
	}
	if total < quantity {
		return ErrSoldOut
	}
	need := quantity
	for _, st := range locked {
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

// giveBackGA returns the places of holds to the stripes they came from. All the
// holds' places are given back together, stripe by stripe in (tier, stripe) order: the
// one order every multi-stripe statement locks in, so it cannot deadlock with a
// multi-stripe take or another give-back.
func (s *store) giveBackGA(ctx context.Context, q *db.Queries, eventID int64, holdIDs ...int64) error {
	type key struct {
		tier   int64
		stripe int32
	}
	sums := map[key]int32{}
	for _, h := range holdIDs {
		places, err := q.HoldGAPlaces(ctx, db.HoldGAPlacesParams{EventID: eventID, HoldID: h})
		if err != nil {
			return err
		}
		for _, p := range places {
			sums[key{p.TierID, p.Stripe}] += p.Quantity
		}
	}
	keys := slices.SortedFunc(maps.Keys(sums), func(a, b key) int {
		return cmp.Or(cmp.Compare(a.tier, b.tier), cmp.Compare(a.stripe, b.stripe))
	})
	for _, k := range keys {
		if err := q.GAStripeGive(ctx, db.GAStripeGiveParams{
			EventID: eventID, TierID: k.tier, Stripe: k.stripe, Quantity: sums[k],
		}); err != nil {
			return err
		}
	}
	for _, h := range holdIDs {
		if err := q.HoldGAPlacesClear(ctx, db.HoldGAPlacesClearParams{EventID: eventID, HoldID: h}); err != nil {
			return err
		}
	}
	return nil
}
