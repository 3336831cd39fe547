package booking

import (
	"context"
	"log/slog"
	"regexp"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"boxoffice/internal/booking/bookingtest"
	"boxoffice/internal/dbtest"
	"boxoffice/internal/demo"
	"boxoffice/internal/live"
)

// statements counts the statements a pool runs, by sqlc query name.
type statements struct {
	mu     sync.Mutex
	byName map[string]int
}

var queryName = regexp.MustCompile(`^-- name: (\w+)`)

func (c *statements) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	name := "other"
	if m := queryName.FindStringSubmatch(d.SQL); m != nil {
		name = m[1]
	}
	c.mu.Lock()
	c.byName[name]++
	c.mu.Unlock()
	return ctx
}

func (c *statements) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

func (c *statements) count(name string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if name == "" {
		n := 0
		for _, v := range c.byName {
			n += v
		}
		return n
	}
	return c.byName[name]
}

// liveFixture is the demo event on a database whose statements are counted, sold by a
// service that announces through a live.Publisher, with a hub feeding its map cache.
type liveFixture struct {
	pool   *pgxpool.Pool
	svc    *Services
	stmts  *statements
	event  int64
	tier   int64
	hub    *live.Hub
	resets chan int64
}

func newLiveFixture(t *testing.T, cfg Config) liveFixture {
	t.Helper()
	pc, err := pgxpool.ParseConfig(dbtest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	f := liveFixture{stmts: &statements{byName: map[string]int{}}, resets: make(chan int64, 10)}
	pc.ConnConfig.Tracer = f.stmts
	if f.pool, err = pgxpool.NewWithConfig(t.Context(), pc); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.pool.Close)
	if f.event, err = demo.Create(t.Context(), f.pool, demo.DemoSpec(time.Now())); err != nil {
		t.Fatalf("create event: %v", err)
	}
	if err := f.pool.QueryRow(t.Context(), `SELECT min(id) FROM ga_tiers WHERE event_id = $1`, f.event).Scan(&f.tier); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { bookingtest.Check(t, f.pool, f.event) })

	log := &warnings{}
	t.Cleanup(func() {
		if n := log.n.Load(); n > 0 {
			t.Errorf("services logged %d warnings, want none; first: %q", n, log.first)
		}
	})
	rdb, prefix := dbtest.Redis(t)
	pub := live.NewPublisher(rdb, prefix, slog.New(log))
	t.Cleanup(pub.Close)
	f.svc = New(f.pool, cfg, pub, nil, slog.New(log))
	f.svc.store.maps.snapEvery = 0 // every read sees the latest patch
	f.hub = live.NewHub(rdb, prefix, slog.New(log), live.HubOptions{
		Flush: 10 * time.Millisecond,
		Apply: f.svc.Maps.ApplySeatChanges,
		Reset: func(ctx context.Context, ev, v int64) {
			f.svc.Maps.ResyncSeatMap(ctx, ev, v)
			f.resets <- v
		},
		Unwatched: f.svc.Maps.SeatMapUnwatched,
	})
	t.Cleanup(f.hub.Close)
	return f
}

// watch starts watching the event and waits until the feed has synced the cache.
func (f liveFixture) watch(t *testing.T) *live.Watcher {
	t.Helper()
	w, err := f.hub.Watch(t.Context(), f.event, 0)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-f.resets:
	case <-time.After(10 * time.Second):
		t.Fatal("the feed never synced the map")
	}
	return w
}

// await reads batches until they have named all of seats (and a GA change, if ga) and
// returns the version reached.
func await(t *testing.T, w *live.Watcher, ga bool, seats ...int64) int64 {
	t.Helper()
	seen := map[int64]bool{}
	sawGA := false
	deadline := time.After(10 * time.Second)
	for {
		select {
		case b, ok := <-w.C():
			if !ok {
				t.Fatalf("watcher ended: %v", w.Err())
			}
			if b.Reset {
				t.Fatalf("got a Reset at version %d, want changes", b.Version)
			}
			for _, id := range b.SeatIDs {
				seen[id] = true
			}
			sawGA = sawGA || b.GA
			done := sawGA || !ga
			for _, id := range seats {
				done = done && seen[id]
			}
			if done {
				return b.Version
			}
		case <-deadline:
			t.Fatalf("seats %v never announced (saw %v)", seats, seen)
		}
	}
}

func statusOf(m SeatMap, id int64) string {
	for _, s := range m.Seats {
		if s.ID == id {
			return s.Status
		}
	}
	return "missing"
}

// TestSeatMapFedByFeed: holds, releases, GA holds and the tidy-up of lapsed holds all
// reach the cached map through the feed, patched in by re-reading only the seats named;
// the map is loaded whole once, and reading it costs no statement at all.
func TestSeatMapFedByFeed(t *testing.T) {
	t.Parallel()
	f := newLiveFixture(t, Config{HoldTTL: time.Minute})
	w := f.watch(t)
	ctx := t.Context()

	m, err := f.svc.Maps.SeatMap(ctx, f.event)
	if err != nil {
		t.Fatal(err)
	}
	if m.Version != 0 || len(m.Seats) != 1980 {
		t.Fatalf("got version %d with %d seats, want version 0 with 1980", m.Version, len(m.Seats))
	}
	gaLeft := m.GATiers[0].Remaining
	a, b := m.Seats[10].ID, m.Seats[11].ID

	// Readers all along, for the race detector.
	readers, stop := sync.WaitGroup{}, make(chan struct{})
	for range 4 {
		readers.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := f.svc.Maps.SeatMap(ctx, f.event); err != nil {
					t.Errorf("SeatMap: %v", err)
					return
				}
			}
		})
	}

	h, err := f.svc.Buyer.Hold(ctx, HoldRequest{EventID: f.event, Buyer: "ann", SeatIDs: []int64{a, b}})
	if err != nil {
		t.Fatal(err)
	}
	v := await(t, w, false, a, b)
	m, _ = f.svc.Maps.SeatMap(ctx, f.event)
	if statusOf(m, a) != SeatHeld || statusOf(m, b) != SeatHeld || m.Version < v {
		t.Errorf("after the hold got %s/%s at version %d, want held/held at %d or later", statusOf(m, a), statusOf(m, b), m.Version, v)
	}

	if err := f.svc.Buyer.Release(ctx, h.ID, "ann"); err != nil {
		t.Fatal(err)
	}
	v = await(t, w, false, a, b)
	m, _ = f.svc.Maps.SeatMap(ctx, f.event)
	if statusOf(m, a) != SeatAvailable || m.Version < v {
		t.Errorf("after the release got %s at version %d, want available at %d or later", statusOf(m, a), m.Version, v)
	}

	if _, err := f.svc.Buyer.Hold(ctx, HoldRequest{EventID: f.event, Buyer: "bob", GATierID: f.tier, Quantity: 3}); err != nil {
		t.Fatal(err)
	}
	await(t, w, true)
	m, _ = f.svc.Maps.SeatMap(ctx, f.event)
	if got := m.GATiers[0].Remaining; got != gaLeft-3 {
		t.Errorf("after a GA hold of 3 got %d places left, want %d", got, gaLeft-3)
	}
	close(stop)
	readers.Wait()

	// A hold that lapses is announced by the tidy-up that clears it, seats and places.
	c := m.Seats[20].ID
	hc, err := f.svc.Buyer.Hold(ctx, HoldRequest{EventID: f.event, Buyer: "cat", SeatIDs: []int64{c}})
	if err != nil {
		t.Fatal(err)
	}
	await(t, w, false, c)
	hd, err := f.svc.Buyer.Hold(ctx, HoldRequest{EventID: f.event, Buyer: "dan", GATierID: f.tier, Quantity: 2})
	if err != nil {
		t.Fatal(err)
	}
	await(t, w, true)
	fixture{pool: f.pool}.lapse(t, hc.ID)
	fixture{pool: f.pool}.lapse(t, hd.ID)
	res, err := f.svc.Worker.Tidy(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(res.Seats[f.event], []int64{c}) || res.GAHolds != 1 {
		t.Fatalf("the tidy-up cleared seats %v and %d GA holds, want [%d] and 1", res.Seats[f.event], res.GAHolds, c)
	}
	await(t, w, true, c)
	m, _ = f.svc.Maps.SeatMap(ctx, f.event)
	if statusOf(m, c) != SeatAvailable || m.GATiers[0].Remaining != gaLeft-3 {
		t.Errorf("after the tidy-up got %s and %d GA places, want available and %d", statusOf(m, c), m.GATiers[0].Remaining, gaLeft-3)
	}

	if n := f.stmts.count("SeatMap"); n != 1 {
		t.Errorf("got %d whole-map loads, want 1 (the feed's first sync)", n)
	}
	if n := f.stmts.count("SeatMapByIDs"); n < 4 {
		t.Errorf("got %d seat re-reads, want one per seat change (4 or more)", n)
	}
	before := f.stmts.count("")
	for range 100 {
		if _, err := f.svc.Maps.SeatMap(ctx, f.event); err != nil {
			t.Fatal(err)
		}
	}
	if n := f.stmts.count("") - before; n != 0 {
		t.Errorf("100 reads of a fed map ran %d statements, want 0", n)
	}
}

// TestSeatMapUnfed: a map nobody watches is loaded once per MapMaxAge however many read
// it, and its version stays what the feed last vouched for.
func TestSeatMapUnfed(t *testing.T) {
	t.Parallel()
	f := newLiveFixture(t, Config{MapMaxAge: time.Hour})
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			if _, err := f.svc.Maps.SeatMap(t.Context(), f.event); err != nil {
				t.Errorf("SeatMap: %v", err)
			}
		})
	}
	wg.Wait()
	if n := f.stmts.count("SeatMap"); n != 1 {
		t.Errorf("20 readers ran %d whole-map loads, want 1", n)
	}
	if _, err := f.svc.Maps.SeatMap(t.Context(), 1<<40); err != ErrEventNotFound {
		t.Errorf("map of an unknown event: got %v, want ErrEventNotFound", err)
	}
	if e := f.svc.store.maps.lookup(1 << 40); e != nil {
		t.Error("map of an unknown event: an entry stays cached, want none (made-up ids must not grow the cache)")
	}
}

// TestSeatMapResetReloads: a Reset reloads the map whole and stamps the version it was
// given, and a stale map is never handed out under the new version.
func TestSeatMapResetReloads(t *testing.T) {
	t.Parallel()
	f := newLiveFixture(t, Config{})
	ctx := t.Context()
	f.svc.Maps.ResyncSeatMap(ctx, f.event, 41)
	m, err := f.svc.Maps.SeatMap(ctx, f.event)
	if err != nil {
		t.Fatal(err)
	}
	if m.Version != 41 {
		t.Errorf("after a reset to 41 got version %d, want 41", m.Version)
	}
	// A change behind the feed's back (no announcement), then a reset: the map has it.
	st := m.Seats[0]
	if _, err := f.pool.Exec(ctx, `UPDATE seats SET price_cents = price_cents + 1 WHERE id = $1`, st.ID); err != nil {
		t.Fatal(err)
	}
	f.svc.Maps.ResyncSeatMap(ctx, f.event, 50)
	m, _ = f.svc.Maps.SeatMap(ctx, f.event)
	if m.Seats[0].PriceCents != st.PriceCents+1 || m.Version != 50 {
		t.Errorf("after a reset to 50 got price %d at version %d, want %d at 50", m.Seats[0].PriceCents, m.Version, st.PriceCents+1)
	}
	if n := f.stmts.count("SeatMap"); n != 2 {
		t.Errorf("got %d whole-map loads, want 2 (one per reset)", n)
	}
}

// TestFedMapServedWhileReloading: a map the feed keeps current is served at once when
// it is past its safety-net age, while the whole reload runs beside its readers: a slow
// database (here a lock on the seats) no longer holds a seat map request for a reload.
// Readers waited for it before, and this request timed out.
func TestFedMapServedWhileReloading(t *testing.T) {
	t.Parallel()
	f := newFixture(t, smallSpec([]demo.Section{oneRow("Floor", 3, 1000)}), DefaultConfig())
	f.svc.store.maps.fedMaxAge = time.Millisecond
	f.svc.Maps.ResyncSeatMap(t.Context(), f.event, 1) // followed by the feed from version 1
	time.Sleep(5 * time.Millisecond)                  // past the safety net

	tx, err := f.pool.Begin(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(context.Background())
	if _, err := tx.Exec(t.Context(), `LOCK TABLE seats IN ACCESS EXCLUSIVE MODE`); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
	defer cancel()
	m, err := f.svc.Maps.SeatMap(ctx, f.event)
	if err != nil || len(m.Seats) != 3 || m.Version != 1 {
		t.Fatalf("seat map while a reload waits on the database: got %d seats, version %d, %v; want the fed copy at once", len(m.Seats), m.Version, err)
	}
	if err := tx.Rollback(t.Context()); err != nil {
		t.Fatal(err)
	}
	e := f.svc.store.maps.lookup(f.event)
	e.loadMu <- struct{}{} // the reload beside the readers has finished
	<-e.loadMu
}

// TestSeatMapCacheForgetsIdleEvents: an event's map nobody has asked for in mapIdle is
// dropped, and its next reader loads it anew, whole; one the live feed follows is kept
// however long nobody reads it here.
func TestSeatMapCacheForgetsIdleEvents(t *testing.T) {
	t.Parallel()
	f := demoFixture(t, DefaultConfig())
	var clock atomic.Int64
	clock.Store(time.Now().UnixNano())
	f.svc.store.maps.mu.Lock()
	f.svc.store.maps.now = func() time.Time { return time.Unix(0, clock.Load()) }
	f.svc.store.maps.mu.Unlock()
	entry := func() *mapEntry {
		f.svc.store.maps.mu.Lock()
		defer f.svc.store.maps.mu.Unlock()
		return f.svc.store.maps.entries[f.event]
	}
	read := func() {
		t.Helper()
		m, err := f.svc.Maps.SeatMap(t.Context(), f.event)
		if err != nil || len(m.Seats) != 1980 {
			t.Fatalf("seat map: %d seats, %v; want 1980", len(m.Seats), err)
		}
	}
	read()
	first := entry()
	clock.Add(int64(mapIdle + 2*time.Minute))
	read()
	second := entry()
	if second == first {
		t.Fatalf("the map unasked for %s: kept, want it dropped and loaded anew", mapIdle+2*time.Minute)
	}

	f.svc.Maps.ResyncSeatMap(t.Context(), f.event, 1) // the live feed follows it from here
	clock.Add(int64(mapIdle + 2*time.Minute))
	read()
	if entry() != second {
		t.Errorf("a map the live feed follows was dropped after %s unread", mapIdle+2*time.Minute)
	}
}
