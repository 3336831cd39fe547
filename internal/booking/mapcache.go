package booking

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	"boxoffice/internal/db"
)

// The seat map cache: one entry per event, so that a viewer's map never costs a
// 50,000-row query (about 25 ms of database time). An event the live feed follows
// (some viewer in this process watches it) is kept current by the feed: every change is
// patched in by re-reading just its seats, and the entry is trusted for fedMapMaxAge.
// An event nobody watches here is reloaded whole when older than Config.MapMaxAge.
//
// Version is the invariant that makes replay work: an entry at version V reflects every
// change up to V (and possibly some after it; patches re-read seats, so applying a
// change twice is harmless). A viewer's stream starts from the Version of its snapshot.

// fedMapMaxAge is how long a map kept current by the feed is trusted before a full
// reload, as a safety net: the hub resets on any message it can tell it missed, so this
// only bounds the damage of a bug.
const fedMapMaxAge = 30 * time.Second

// snapshotEvery bounds how often a changing map is copied for readers: at 100 changes a
// second, one 50,000-seat copy (about 5 MB) per change would be half a gigabyte a
// second. A reader may get a copy up to this old, with that copy's own Version.
const snapshotEvery = 100 * time.Millisecond

type mapCache struct {
	mu        sync.Mutex
	entries   map[int64]*mapEntry
	used      map[int64]time.Time // when each entry was last asked for
	swept     time.Time           // when idle entries were last dropped
	fedMaxAge time.Duration       // fedMapMaxAge; tests change it
	snapEvery time.Duration       // snapshotEvery; tests change it
	now       func() time.Time    // the clock; tests change it
}

// mapIdle is how long an entry nobody asks for is kept, unless the live feed follows
// it: a stadium's map is some 8 MB, and a box office serves many events over its life,
// most of them past. An event asked for again is loaded whole once more.
const mapIdle = 10 * time.Minute

// mapEntry is one event's map. Lock order: loadMu, then snapMu, then mu.
type mapEntry struct {
	loadMu chan struct{} // a one-slot semaphore: one full load at a time, callers may give up

	snapMu  sync.Mutex // one copy at a time; later readers share it
	snap    *SeatMap   // the last copy handed out: never modified
	snapGen uint64
	snapAt  time.Time

	mu       sync.RWMutex
	loaded   bool
	seats    []MapSeat       // patched in place: readers copy, never alias
	index    map[int64]int32 // seat id -> position in seats
	ga       []GATier        // replaced, never modified
	version  int64
	fed      bool      // the feed applies every change
	loadedAt time.Time // when the last full load started
	stale    bool      // a patch failed, or a reset awaits its load: reload first
	resets   uint64    // counts resets; a load started before one leaves the entry stale
	loading  bool      // a full load is under way: patches note what they touched
	dirty    []int64   // seats patched during the load, to re-read after it
	gaDirty  bool
	gen      uint64 // bumped by every change of seats, ga or version

	rowStarts []int32       // where each row begins in seats (set by a full load)
	picks     seatPicks     // seats as best available reads them: kept with seats
	changes   seatChanges   // seats changed here lately, for best available (bestmap.go)
	claiming  claimingSeats // seats best available is claiming from the map right now (bestmap.go)
}

func newMapCache() mapCache {
	return mapCache{entries: map[int64]*mapEntry{}, used: map[int64]time.Time{},
		fedMaxAge: fedMapMaxAge, snapEvery: snapshotEvery, now: time.Now}
}

// entry returns the event's entry, creating an empty one.
func (c *mapCache) entry(eventID int64) *mapEntry {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now()
	c.sweep(now)
	e := c.entries[eventID]
	if e == nil {
		e = &mapEntry{loadMu: make(chan struct{}, 1)}
		c.entries[eventID] = e
	}
	c.used[eventID] = now
	return e
}

// sweep drops, at most once a minute, the entries nobody has asked for in mapIdle,
// unless the live feed follows them or they are loading or locked right now (an entry
// in use is not idle; TryRLock keeps the lock order out of it). Whoever still holds a
// dropped entry finishes with it; the next reader loads a new one. c.mu is held.
func (c *mapCache) sweep(now time.Time) {
	if now.Sub(c.swept) < time.Minute {
		return
	}
	c.swept = now
	for id, e := range c.entries {
		if now.Sub(c.used[id]) <= mapIdle || len(e.loadMu) > 0 || !e.mu.TryRLock() {
			continue
		}
		fed, loading := e.fed, e.loading
		e.mu.RUnlock()
		if !fed && !loading {
			delete(c.entries, id)
			delete(c.used, id)
		}
	}
}

// forget drops the event's entry if it is still e.
func (c *mapCache) forget(eventID int64, e *mapEntry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries[eventID] == e {
		delete(c.entries, eventID)
		delete(c.used, eventID)
	}
}

func (c *mapCache) lookup(eventID int64) *mapEntry {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.entries[eventID]
	if e != nil {
		c.used[eventID] = c.now()
	}
	return e
}

// SeatMap returns the event's seats and GA tiers with the Version they reflect. Served
// from the cache: concurrent callers share one load, and a map the live feed keeps
// current is read without touching the database.
func (s *Maps) SeatMap(ctx context.Context, eventID int64) (SeatMap, error) {
	e := s.maps.entry(eventID)
	if err := s.ensureMap(ctx, eventID, e); err != nil {
		return SeatMap{}, err
	}
	return e.snapshot(eventID, s.maps.snapEvery), nil
}

// SeatMapSeats returns just these seats of the event's map (unknown ids left out) and
// all its GA tiers, with the Version they reflect: what a live page re-renders when the
// feed names changed seats, without copying the whole map.
func (s *Maps) SeatMapSeats(ctx context.Context, eventID int64, seatIDs []int64) (SeatMap, error) {
	e := s.maps.entry(eventID)
	if err := s.ensureMap(ctx, eventID, e); err != nil {
		return SeatMap{}, err
	}
	e.mu.RLock()
	defer e.mu.RUnlock()
	m := SeatMap{EventID: eventID, Version: e.version, At: time.Now(), GATiers: slices.Clone(e.ga),
		Seats: make([]MapSeat, 0, len(seatIDs))}
	if e.stale {
		m.Version = 0 // see snapshot
	}
	for _, id := range seatIDs {
		if p, ok := e.index[id]; ok {
			m.Seats = append(m.Seats, e.seats[p])
		}
	}
	return m, nil
}

// ApplySeatChanges patches a change announced by the live feed into the event's map: it
// re-reads the named seats, and the GA tiers of an event that has any (a GA change names
// no seats, and the publisher may merge it with seat changes), and records version. It
// is the hub's Apply hook, called in version order before any viewer hears of the
// change. A failed re-read leaves the map to be reloaded whole by its next reader.
func (s *Maps) ApplySeatChanges(ctx context.Context, eventID, version int64, seatIDs []int64) {
	e := s.maps.lookup(eventID)
	if e == nil {
		return
	}
	e.mu.Lock()
	if !e.loaded {
		// The first load, under way or yet to come, will see the change; one under way
		// reads its seats again before it installs.
		if e.loading {
			e.dirty = append(e.dirty, seatIDs...)
			e.gaDirty = true
		}
		e.version = version
		e.gen++
		e.mu.Unlock()
		return
	}
	readGA := len(seatIDs) == 0 || len(e.ga) > 0
	e.mu.Unlock()

	rows, tiers, err := s.readMapPart(ctx, eventID, seatIDs, readGA)
	e.mu.Lock()
	defer e.mu.Unlock()
	if err != nil {
		if ctx.Err() == nil { // not merely the hub shutting down
			s.log.WarnContext(ctx, "seat map patch failed: reloading it", "event", eventID, "err", err)
		}
		e.stale = true
	} else if !e.patch(rows, tiers) {
		e.stale = true // a seat we never saw: the event changed shape
	}
	if e.loading {
		e.dirty = append(e.dirty, seatIDs...)
		e.gaDirty = e.gaDirty || readGA
	}
	e.version = version
	e.gen++
}

// ResyncSeatMap reloads the event's map whole and stamps it with version: the caller
// vouches that every change up to version has committed. It is the hub's Reset hook,
// called when the feed starts following the event or may have lost messages; from then
// on the map is trusted to be fed. On failure the map stays marked for reloading.
func (s *Maps) ResyncSeatMap(ctx context.Context, eventID, version int64) {
	e := s.maps.entry(eventID)
	e.mu.Lock()
	e.fed, e.version, e.stale = true, version, true
	e.resets++
	e.gen++
	e.mu.Unlock()
	if err := s.ensureMap(ctx, eventID, e); err != nil && ctx.Err() == nil {
		s.log.WarnContext(ctx, "seat map resync failed: its next reader reloads it", "event", eventID, "err", err)
	}
}

// SeatMapUnwatched tells the cache that the live feed no longer follows the event: its
// map falls back to Config.MapMaxAge. It is the hub's Unwatched hook.
func (s *Maps) SeatMapUnwatched(eventID int64) {
	if e := s.maps.lookup(eventID); e != nil {
		e.mu.Lock()
		e.fed = false
		e.mu.Unlock()
	}
}

// fresh reports whether the entry may be served as it is.
func (s *store) fresh(e *mapEntry) bool {
	e.mu.RLock()
	defer e.mu.RUnlock()
	maxAge := s.cfg.MapMaxAge
	if e.fed {
		maxAge = s.maps.fedMaxAge
	}
	return e.loaded && !e.stale && time.Since(e.loadedAt) < maxAge
}

// ensureMap loads the entry whole unless it is fresh. Loads of one event take turns,
// and whoever waited for one uses its result rather than loading again.
func (s *store) ensureMap(ctx context.Context, eventID int64, e *mapEntry) error {
	if s.fresh(e) {
		return nil
	}
	if s.fedButAged(e) {
		// Kept current by the feed and only past fedMaxAge, its safety net: readers go on
		// with it while one reload runs beside them. At an onsale a whole reload can take
		// longer than a request may wait (in make onsale a seat map request can wait 15 s
		// for one), and the copy the feed keeps is as current as the reload would be.
		select {
		case e.loadMu <- struct{}{}:
			go s.refreshMap(eventID, e)
		default: // a load is under way
		}
		return nil
	}
	select {
	case e.loadMu <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-e.loadMu }()
	if s.fresh(e) {
		return nil
	}
	err := s.loadMapInto(ctx, eventID, e)
	if errors.Is(err, ErrEventNotFound) {
		// No such event: leave nothing behind, or every made-up id asked for (the
		// seat map API takes any) would keep an entry for the life of the process.
		s.maps.forget(eventID, e)
	}
	return err
}

// fedButAged reports whether the entry is sound and kept current by the feed, and
// wants reloading only because it is older than the feed's safety net allows.
func (s *store) fedButAged(e *mapEntry) bool {
	e.mu.RLock()
	defer e.mu.RUnlock()
	return e.loaded && !e.stale && e.fed
}

// refreshMap reloads a fed map past its safety-net age, beside its readers. The caller
// took e.loadMu; refreshMap gives it back.
func (s *store) refreshMap(eventID int64, e *mapEntry) {
	defer func() { <-e.loadMu }()
	if s.fresh(e) {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), mapRefreshTimeout)
	defer cancel()
	if err := s.loadMapInto(ctx, eventID, e); err != nil {
		s.log.WarnContext(ctx, "seat map refresh failed: the copy the feed keeps stays in use", "event", eventID, "err", err)
	}
}

// mapRefreshTimeout bounds a reload that runs beside the map's readers.
const mapRefreshTimeout = time.Minute

// loadMapInto reads the whole map and installs it. Patches that land while it reads are
// applied to the old copy and noted; their seats are read again into the new copy
// before it is installed, so a load never undoes a newer patch.
func (s *store) loadMapInto(ctx context.Context, eventID int64, e *mapEntry) error {
	e.mu.Lock()
	e.loading, e.dirty, e.gaDirty = true, nil, false
	resets := e.resets
	// A map the feed keeps current is stamped with the feed's version, which vouches
	// for every change up to it: it loads from the primary. One nobody watches may be
	// as stale as the replica.
	q := s.q
	if !e.fed {
		q = s.stale()
	}
	e.mu.Unlock()
	started := time.Now()
	m, err := s.loadSeatMap(ctx, q, eventID)
	next := &mapEntry{seats: m.Seats, ga: m.GATiers}
	if err == nil {
		next.index = make(map[int64]int32, len(m.Seats))
		for i, st := range m.Seats {
			next.index[st.ID] = int32(i)
		}
		next.rowStarts = rowStartsOf(m.Seats)
		next.picks = picksOf(m.Seats, next.rowStarts)
	}
	for err == nil {
		e.mu.Lock()
		if len(e.dirty) == 0 && !e.gaDirty {
			e.seats, e.index, e.ga, e.rowStarts, e.picks = next.seats, next.index, next.ga, next.rowStarts, next.picks
			e.loaded, e.loading, e.loadedAt = true, false, started
			e.stale = e.resets != resets
			e.gen++
			e.mu.Unlock()
			return nil
		}
		ids, readGA := e.dirty, e.gaDirty
		e.dirty, e.gaDirty = nil, false
		e.mu.Unlock()
		var rows []db.SeatMapByIDsRow
		var tiers []GATier
		if rows, tiers, err = s.readMapPart(ctx, eventID, ids, readGA); err == nil && !next.patch(rows, tiers) {
			e.mu.Lock()
			e.resets++ // a seat the load did not see: load again
			e.mu.Unlock()
		}
	}
	e.mu.Lock()
	e.loading, e.dirty = false, nil
	e.mu.Unlock()
	return err
}

// readMapPart reads some seats of the map, and the GA tiers if asked.
func (s *store) readMapPart(ctx context.Context, eventID int64, seatIDs []int64, readGA bool) ([]db.SeatMapByIDsRow, []GATier, error) {
	var rows []db.SeatMapByIDsRow
	if len(seatIDs) > 0 {
		var err error
		if rows, err = s.q.SeatMapByIDs(ctx, db.SeatMapByIDsParams{EventID: eventID, SeatIds: seatIDs}); err != nil {
			return nil, nil, translate(err)
		}
	}
	if !readGA {
		return rows, nil, nil
	}
	tiers, err := s.gaTiers(ctx, eventID)
	return rows, tiers, err
}

// patch writes re-read seats and tiers (if any) into the entry. It reports false if a
// seat is not on the map. Called with e.mu held, or on an entry nobody else sees.
func (e *mapEntry) patch(rows []db.SeatMapByIDsRow, tiers []GATier) bool {
	known := true
	for _, r := range rows {
		p, ok := e.index[r.ID]
		if !ok {
			known = false
			continue
		}
		e.seats[p] = mapSeat(db.SeatMapRow(r))
		e.setPick(int(p))
	}
	if tiers != nil {
		e.ga = tiers
	}
	return known
}

// snapshot returns a copy of the map for one reader. Copies are shared: a new one is
// made only when the map changed and the last copy is older than snapshotEvery. A map
// gone stale since the caller checked it (a reset stamped a version its seats do not
// reflect yet) is not copied: the last copy is, or else the copy claims version 0,
// which makes its stream start with a reset.
func (e *mapEntry) snapshot(eventID int64, every time.Duration) SeatMap {
	e.snapMu.Lock()
	defer e.snapMu.Unlock()
	e.mu.RLock()
	defer e.mu.RUnlock()
	if e.snap != nil && (e.snapGen == e.gen || e.stale || time.Since(e.snapAt) < every) {
		return *e.snap
	}
	now := time.Now()
	m := &SeatMap{EventID: eventID, Seats: slices.Clone(e.seats), GATiers: slices.Clone(e.ga), Version: e.version, At: now}
	if !e.fed {
		m.At = e.loadedAt
	}
	if e.stale {
		m.Version = 0
	}
	e.snap, e.snapGen, e.snapAt = m, e.gen, now
	return *m
}
