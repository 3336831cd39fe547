package app

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"boxoffice/internal/metrics"
)

// queues reads the waiting room of every event whose room is on, for /metrics: the
// events from the database, their rooms from Redis. An event whose room cannot be read
// is left out, and the error says why.
func (a *App) queues(ctx context.Context) ([]metrics.Queue, error) {
	events, err := a.Booking.QueuedEvents(ctx)
	if err != nil {
		return nil, err
	}
	var out []metrics.Queue
	var errs []error
	for _, ev := range events {
		qe := ev.Room() // the room's own view: a paused room admits at rate 0
		if !qe.Settings.Enabled {
			continue
		}
		n, err := a.Queue.Counts(ctx, ev.ID)
		if err != nil {
			errs = append(errs, fmt.Errorf("event %d: %w", ev.ID, err))
			continue
		}
		out = append(out, metrics.Queue{EventID: ev.ID, Waiting: n.Waiting, Active: n.Active,
			Rate: qe.Settings.Rate, Limit: a.Queue.Limited(qe.Settings).Rate})
	}
	return out, errors.Join(errs...)
}

// Ready reports whether PostgreSQL and Redis answer.
func (a *App) Ready(ctx context.Context) error {
	return errors.Join(a.Pool.Ping(ctx), a.Redis.Ping(ctx).Err())
}

// Run does the background work of a server until ctx ends: the tidy-up of lapsed holds,
// the removal of expired sessions and of old failed staff logins, the waiting room's
// admitter (which works on one instance at a time and stands by on the others), and
// the job queue's workers (on every instance; River elects one to queue the periodic
// reconciliation). It returns once all of them have stopped.
func (a *App) Run(ctx context.Context) {
	var wg sync.WaitGroup
	wg.Go(func() { a.store.Cleanup(ctx, 5*time.Minute) })
	wg.Go(func() { a.pruneLoginFailures(ctx, 10*time.Minute) })
	wg.Go(func() { a.Queue.Run(ctx) })
	wg.Go(func() { a.Jobs.Run(ctx) })
	a.Booking.RunTidy(ctx, a.Config.TidyInterval)
	wg.Wait()
}

// pruneLoginFailures deletes failed staff logins past the throttle's window every
// interval until ctx ends: the throttle counts only within the window, so this only
// keeps the table small. Every instance may do it; the deletes do not conflict.
func (a *App) pruneLoginFailures(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if _, err := a.Staff.PruneFailures(ctx); err != nil && ctx.Err() == nil {
				a.Log.Warn("old failed logins not pruned", "err", err)
			}
		}
	}
}

// Close ends the live streams, stops the job queue if Run left it running, lets the
// payment provider finish its deliveries (within ctx), sends the seat changes still
// queued, and closes the connections, in that order: each step may still need the
// ones after it.
func (a *App) Close(ctx context.Context) error {
	var err error
	if a.Live != nil {
		a.Live.Close()
	}
	if a.Jobs != nil {
		err = a.Jobs.Stop(ctx)
	}
	if a.Payments != nil {
		err = errors.Join(err, a.Payments.Close(ctx))
	}
	if a.publisher != nil {
		a.publisher.Close()
	}
	if a.Redis != nil {
		err = errors.Join(err, a.Redis.Close())
	}
	if a.Pool != nil {
		a.Pool.Close()
	}
	return err
}
