package live

import (
	"context"
	"encoding/json"
	"time"

	"boxoffice/internal/ticker"
)

// repairLoop runs the Repair hook every RepairEvery while the feed has watchers and
// knows its version, until ctx ends. Announcements are hints sent after commit, so one
// can be lost for good (the instance that committed died before publishing, or Redis
// refused the publish while the subscribers' connections stayed up, so no gap shows).
// A difference Repair finds is announced like any change: every instance re-reads the
// seats, and a viewer that reconnects from an older version has it replayed. An
// announcement that fails is simply found again at the next run.
func (f *feed) repairLoop(ctx context.Context) {
	h := f.hub
	if h.opt.Repair == nil {
		return
	}
	ticker.Every(ctx, h.opt.RepairEvery, func() { f.repair(ctx) })
}

// repair runs the Repair hook once and announces what it found.
func (f *feed) repair(ctx context.Context) {
	h := f.hub
	f.mu.Lock()
	watched := f.ready && len(f.watchers) > 0
	f.mu.Unlock()
	if !watched {
		return
	}
	seats, ga, shownFree, err := h.opt.Repair(ctx, f.event)
	if err != nil {
		if ctx.Err() == nil {
			h.log.Warn("seat map repair: the map could not be compared", "event", f.event, "err", err)
		}
		return
	}
	if len(seats) == 0 && !ga {
		return
	}
	if shownFree > 0 {
		// A hold or a sale whose announcement was lost: its seats were offered as free.
		h.log.Warn("seat map repair: viewers were shown free what the database has taken; announcing the difference",
			"event", f.event, "seats", len(seats), "ga", ga, "shown_free", shownFree)
	} else {
		// Holds that lapsed: expiry is lazy, and this is what announces it.
		h.log.Debug("seat map repair: announcing seats freed since the map was sent (lapsed holds)",
			"event", f.event, "seats", len(seats), "ga", ga)
	}
	if err := f.announce(ctx, seats, ga); err != nil && ctx.Err() == nil {
		h.log.Warn("seat map repair not announced", "event", f.event, "err", err)
	}
}

// announce publishes a change of the event as the Publisher does.
func (f *feed) announce(ctx context.Context, seats []int64, ga bool) error {
	h := f.hub
	if seats == nil {
		seats = []int64{} // never null in the message
	}
	ids, err := json.Marshal(seats)
	if err != nil {
		return err
	}
	flag := "0"
	if ga {
		flag = "1"
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	return publishScript.Run(ctx, h.rdb, []string{versionKey(h.prefix, f.event)}, seatsChannel(h.prefix, f.event), string(ids), flag).Err()
}
