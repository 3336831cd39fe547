package booking

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"boxoffice/internal/db"
	"boxoffice/internal/ticker"
)

// TidyResult counts what one tidy-up round freed.
type TidyResult struct {
	Seats   map[int64][]int64 // event id -> seats whose lapsed hold was cleared
	GAHolds int               // lapsed GA holds whose places went back on sale
}

// Tidy clears lapsed holds of current events: seats back to plain free (so maps and
// best available's index see them), GA places back to their stripes. Correctness never
// waits for it: every claim treats a lapsed hold as free already. For GA it is about
// liveness: until it runs, lapsed places are briefly unsellable, never oversold.
func (s *Worker) Tidy(ctx context.Context) (TidyResult, error) {
	res := TidyResult{Seats: map[int64][]int64{}}
	events, err := s.q.EventIDsCurrent(ctx)
	if err != nil {
		return res, translate(err)
	}
	for _, ev := range events {
		freed, err := s.q.SeatTidyLapsed(ctx, db.SeatTidyLapsedParams{EventID: ev, MaxSeats: 5000})
		if err != nil {
			return res, translate(err)
		}
		if len(freed) > 0 {
			res.Seats[ev] = freed
			s.announce(ctx, ev, freed)
		}
		n := 0
		err = s.inTx(ctx, func(tx pgx.Tx, q *db.Queries) error {
			n = 0
			holds, err := q.HoldsGALapsed(ctx, db.HoldsGALapsedParams{EventID: ev, MaxHolds: 500})
			if err != nil {
				return err
			}
			if err := s.giveBackGA(ctx, q, ev, holds...); err != nil {
				return err
			}
			for _, h := range holds {
				if _, err := q.HoldMarkReleased(ctx, db.HoldMarkReleasedParams{EventID: ev, ID: h}); err != nil {
					return err
				}
				n++
			}
			return nil
		})
		if err != nil {
			return res, err
		}
		if n > 0 {
			s.announceGA(ctx, ev)
		}
		res.GAHolds += n
	}
	return res, nil
}

// RunTidy tidies every interval until ctx ends.
func (s *Worker) RunTidy(ctx context.Context, interval time.Duration) {
	ticker.Every(ctx, interval, func() {
		res, err := s.Tidy(ctx)
		if err != nil && ctx.Err() == nil {
			s.log.WarnContext(ctx, "tidy-up failed", "err", err)
			return
		}
		freed := 0
		for _, ids := range res.Seats {
			freed += len(ids)
		}
		if freed > 0 || res.GAHolds > 0 {
			s.log.InfoContext(ctx, "tidy-up", "seats", freed, "gaHolds", res.GAHolds)
		}
	})
}
