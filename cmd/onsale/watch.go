package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"sync"
	"time"

	"boxoffice/internal/benchkit"
)

// follow keeps the event's live stream open, as the seat page of every shopper's
// browser does, and reads it to nothing: the crowd's map is fetched whole instead. A
// server keeps the map of an event that someone watches current from its seat changes,
// and reloads an unwatched one whole when it is a second old: without a watcher, the
// crowd's fetches would cost it a 50,000-row query a second that no real onsale has.
func (s *sim) follow(ctx context.Context) {
	hc := &http.Client{Transport: s.shopRT} // no time limit: a stream lasts
	for ctx.Err() == nil {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.cfg.URL+"/events/"+s.event.Slug+"/stream", nil)
		if err != nil {
			return
		}
		req.Header.Set("Accept", "text/event-stream")
		if resp, err := hc.Do(req); err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		sleep(ctx, time.Second) // as a browser's EventSource retries
	}
}

// watch keeps the seat map fresh (every MapEvery, each read marked for the sell-out:
// look), the timeline (a sample a second, the machine's speed in it: speed.go) and the
// progress line, until ctx ends. The map is fetched apart from the sampling: under
// load a fetch can take seconds, and the timeline must not wait for it.
func (s *sim) watch(ctx context.Context, c *client, progress io.Writer, onsale time.Time) {
	var fetcher sync.WaitGroup
	defer fetcher.Wait()
	fetcher.Go(func() { s.follow(ctx) })
	if s.event.WaitingRoom {
		// A connection of its own: pages read the board from a CDN's edge, not behind
		// the crowd's looks in the queue's connection pool.
		boardRT := &http.Transport{Proxy: nil, MaxConnsPerHost: 1, MaxIdleConnsPerHost: 1, IdleConnTimeout: 30 * time.Second}
		defer boardRT.CloseIdleConnections()
		fetcher.Go(func() { s.qboard.follow(ctx, s, newClient(c.base, boardRT, s.cfg.Timeout)) })
	}
	if s.cfg.Metrics != "" && s.event.WaitingRoom {
		fetcher.Go(func() { s.followLimit(ctx, c) })
	}
	fetcher.Go(func() { probeSpeed(ctx, &s.probe) })
	fetcher.Go(func() {
		benchkit.Every(ctx, s.cfg.MapEvery, func() { s.look(ctx, c, onsale) })
	})
	lastLine := time.Now()
	benchkit.Every(ctx, time.Second, func() {
		b := s.seats.cur.Load()
		sm := sample{T: time.Since(onsale).Seconds(), Queued: s.gauge.queued.Load(), Active: s.gauge.active.Load(),
			Held: b.held, Sold: b.sold, Available: b.available, GALeft: b.gaRemaining,
			Limit: math.Float64frombits(s.limit.Load()), ProbeMs: math.Float64frombits(s.probe.Load())}
		s.tlMu.Lock()
		s.timeline = append(s.timeline, sm)
		s.tlMu.Unlock()
		if time.Since(lastLine) >= s.cfg.Progress {
			lastLine = time.Now()
			s.count.mu.Lock()
			admitted := s.count.total["admit"]
			s.count.mu.Unlock()
			fmt.Fprintf(progress, "%+6.0fs  queued %6d  admitted %6d  shopping %5d  holding %5d  sold %6d  seats left %6d (+%d places)  held %5d  errors %d\n",
				sm.T, sm.Queued, admitted, sm.Active, s.gauge.holding.Load(), s.gauge.sold.Load(), b.available, b.gaRemaining, b.held, s.count.errs.Load())
		}
	})
}

// mark notes the first map read after the onsale that showed the seats all sold,
// nothing left to hold, and nothing held either.
func (s *sim) mark(b *board, onsale time.Time) {
	if b == nil || !b.at.After(onsale) {
		return
	}
	s.tlMu.Lock()
	defer s.tlMu.Unlock()
	if s.seatsSoldAt.IsZero() && b.available == 0 && b.held == 0 && b.sold > 0 {
		s.seatsSoldAt = b.at
	}
	if b.available == 0 && b.gaRemaining == 0 {
		if s.soldOutAt.IsZero() {
			s.soldOutAt = b.at
		}
		if s.allSoldAt.IsZero() && b.held == 0 {
			s.allSoldAt = b.at
		}
	}
}

// look reads the map and marks the read for the sell-out; a failed read is an
// unexpected answer, unless ctx ended.
func (s *sim) look(ctx context.Context, c *client, onsale time.Time) {
	if b, err := s.seats.fetch(ctx, c, s.eventPath); err == nil {
		s.mark(b, onsale)
	} else if ctx.Err() == nil {
		s.count.unexpected("seat map: " + errKind(err))
	}
}

// lastLook reads the map once more when the buying has ended. The crowd leaves as
// soon as the queue's board says sold out, which it can say within the second
// before the next sample: without this read the sell-out would go unseen.
func (s *sim) lastLook(ctx context.Context, c *client, onsale time.Time) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	s.look(ctx, c, onsale)
}

// followLimit reads the server's admission limit every two seconds until ctx ends: the
// report shows how far below the configured rate the server held its room.
func (s *sim) followLimit(ctx context.Context, c *client) {
	read := func() {
		rctx, cancel := context.WithTimeout(ctx, time.Second)
		v, ok, err := eventGauge(rctx, c.http, s.cfg.Metrics, limitMetric, s.event.ID)
		cancel()
		if err == nil && ok {
			s.limit.Store(math.Float64bits(v))
		}
	}
	read()
	benchkit.Every(ctx, 2*time.Second, read)
}
