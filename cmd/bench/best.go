package main

import (
	"context"
	"errors"
	"flag"
	"fmt"

	"boxoffice/internal/benchkit"
)

// bestBench is `bench best`: best available 4 through the API on a fresh event, then
// on an event whose cheapest seats are held, as deep into an onsale: the search must
// not slow down as the cheap seats go.
type bestBench struct{}

func (bestBench) flags(fs *flag.FlagSet, o *options) {
	fs.IntVar(&o.seats, "seats", 50000, "seats of each event (sections of 50 rows of 50)")
	fs.IntVar(&o.held, "held", 20000, "cheapest seats held before the second run")
}

func (bestBench) check(o options) []error {
	if o.seats < 100 || o.held < 0 || o.held >= o.seats {
		return []error{errors.New("-seats, -held: want at least 100 seats, and 0 or more held, fewer than -seats")}
	}
	return nil
}

func (bestBench) describe(o options) string {
	return fmt.Sprintf("events of %s seats; the second with its %s cheapest held just before its run",
		benchkit.Thousands(o.seats), benchkit.Thousands(o.held))
}

func (bestBench) sessions(o options) int { return o.seats/bestKind.seatsPerSession() + o.clients + 1 }

func (bestBench) prepare(ctx context.Context, srv *server, o options) ([]event, roundFunc, error) {
	evs, err := srv.newEvents(ctx, []string{"bench-best-fresh", "bench-best-held"}, o.seats, o.seats)
	return evs, func(ctx context.Context, r *runner, tag string) error {
		return measureBest(ctx, r, tag, evs[0], evs[1])
	}, err
}

func measureBest(ctx context.Context, r *runner, tag string, freshEv, heldEv event) error {
	step(fmt.Sprintf("best: best available 4 on fresh event %d", freshEv.ID))
	fresh, err := measureAPI(ctx, r, freshEv, bestKind, "API best available 4, fresh event", profileName("best-fresh", tag))
	if err != nil {
		return err
	}
	// The cheapest seats are held just before, so the statistics have not seen it.
	if err := r.srv.holdCheapest(ctx, &heldEv, r.o.held); err != nil {
		return err
	}
	step(fmt.Sprintf("best: best available 4 on event %d, its %d cheapest seats held", heldEv.ID, r.o.held))
	held, err := measureAPI(ctx, r, heldEv, bestKind,
		fmt.Sprintf("API best available 4, %s cheapest held", benchkit.Thousands(heldEv.Held)), profileName("best-held", tag))
	if err != nil {
		return err
	}
	r.rep.compare(tag, fresh, held, "ratio held / fresh", held.rate()/fresh.rate(), fresh.OK > 0, "goal ≥ 0.5")
	return nil
}
