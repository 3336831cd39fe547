package waitroom

import (
	"errors"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"boxoffice/internal/dbtest"
)

// frontOptions make groups short and the cursor enter them soon after, for tests.
var frontOptions = Options{GroupSpan: 50 * time.Millisecond, Settle: 50 * time.Millisecond, Flush: 50 * time.Millisecond,
	Tick: 50 * time.Millisecond}

// frontRoom is a Room with frontOptions (and changes) over the test Redis.
func frontRoom(t *testing.T, change func(*Options)) (*Room, *redis.Client, string) {
	t.Helper()
	rdb, prefix := dbtest.Redis(t)
	opt := frontOptions
	if change != nil {
		change(&opt)
	}
	return newRoom(t, rdb, prefix, Hooks{}, opt), rdb, prefix
}

// tickUntil runs admitter ticks for ev (as Run's holder would) until cond holds of
// the board, failing after the test wait.
func tickUntil(t *testing.T, r *Room, ev Event, what string, cond func(Board) bool) Board {
	t.Helper()
	var b Board
	eventually(t, what, wait, func() bool {
		if err := r.tickEvent(t.Context(), ev, unknownStock); err != nil {
			t.Fatalf("tick: %v", err)
		}
		var err error
		if b, err = r.Board(t.Context(), ev); err != nil {
			t.Fatalf("board: %v", err)
		}
		return cond(b)
	})
	return b
}

func TestPlaceTokenRefusedForgedOrOtherEvent(t *testing.T) {
	t.Parallel()
	r, _, _ := frontRoom(t, nil)
	ev := Event{ID: 7, OnsaleAt: time.Now().Add(time.Hour), Settings: Settings{Enabled: true, Slots: 1, Rate: 1}}
	p, tok := r.Arrive(ev, Board{Counted: 41, Epoch: "ep"})
	got, err := r.VerifyPlace(tok, ev.ID)
	if err != nil || got != p {
		t.Fatalf("VerifyPlace(own token): got %+v, %v; want %+v", got, err, p)
	}
	if p.Group != 0 || p.Number != 41 || p.Epoch != "ep" {
		t.Errorf("place before the onsale: got group %d number %d epoch %q, want 0, 41, ep", p.Group, p.Number, p.Epoch)
	}
	raw, _ := placeEncoding.DecodeString(tok)
	other := New(r.rdb, r.prefix, []Key{{ID: "k1", Secret: []byte("another secret entirely.........")}}, Hooks{}, quiet, Options{})
	_, otherTok := other.Arrive(ev, Board{})
	for name, bad := range map[string]string{
		"altered group": func() string {
			b := slices.Clone(raw)
			b[2] ^= 1
			return placeEncoding.EncodeToString(b)
		}(),
		"forged mac":        placeEncoding.EncodeToString(append(slices.Clone(raw[:len(raw)-1]), raw[len(raw)-1]^1)),
		"another's secret":  otherTok,
		"malformed":         "not-a-token",
		"admission token":   r.sign(ev.ID, "v", time.Now().Add(time.Minute)),
		"truncated payload": placeEncoding.EncodeToString(raw[:10]),
	} {
		if _, err := r.VerifyPlace(bad, ev.ID); !errors.Is(err, ErrInvalidToken) {
			t.Errorf("%s: VerifyPlace got %v, want ErrInvalidToken", name, err)
		}
	}
	if _, err := r.VerifyPlace(tok, ev.ID+1); !errors.Is(err, ErrInvalidToken) {
		t.Errorf("token of event %d for event %d: got %v, want ErrInvalidToken", ev.ID, ev.ID+1, err)
	}
}

// TestArrivalsMakeNoRedisCallEach: a thousand arrivals send Redis nothing; the flush
// after them sends a few commands, as many for a thousand as for ten, and the board
// then counts them all.
func TestArrivalsMakeNoRedisCallEach(t *testing.T) {
	t.Parallel()
	r, rdb, _ := frontRoom(t, nil)
	var cc dbtest.RedisCalls
	rdb.AddHook(&cc)
	if err := rdb.Ping(t.Context()).Err(); err != nil { // the connection's own set-up commands go first
		t.Fatal(err)
	}
	ev := Event{ID: 11, OnsaleAt: time.Now().Add(time.Hour), Settings: Settings{Enabled: true, Slots: 1, Rate: 1}}
	flushCost := func(n int) int64 {
		before := cc.N()
		for range n {
			r.Arrive(ev, Board{})
		}
		if got := cc.N() - before; got != 0 {
			t.Errorf("%d arrivals: got %d Redis commands, want 0", n, got)
		}
		if err := r.Flush(t.Context()); err != nil {
			t.Fatal(err)
		}
		return cc.N() - before
	}
	flushCost(1) // the pipeline's connection makes its own set-up calls once
	small, big := flushCost(10), flushCost(1000)
	if small == 0 || big != small {
		t.Errorf("flush commands: got %d after 10 arrivals and %d after 1,000; want the same, above 0", small, big)
	}
	b, err := r.Board(t.Context(), ev)
	if err != nil || b.Counted != 1011 || b.PreCount != 1011 {
		t.Errorf("board: got counted %d, pre-queue %d (%v); want 1,011 each", b.Counted, b.PreCount, err)
	}
	if c, err := r.Counts(t.Context(), ev.ID); err != nil || c.Waiting != 1011 {
		t.Errorf("counts: got %d waiting (%v), want the 1,011 places", c.Waiting, err)
	}
}

// TestFrontPreQueueShuffledThenFIFO: the cursor lets the pre-queue in first, in the
// order of its random tiebreaks (uncorrelated with arrival), then the later arrivals
// group by group.
func TestFrontPreQueueShuffledThenFIFO(t *testing.T) {
	t.Parallel()
	r, _, _ := frontRoom(t, nil)
	ev := Event{ID: 12, OnsaleAt: time.Now().Add(300 * time.Millisecond),
		Settings: Settings{Enabled: true, Slots: 100000, Rate: 400}}
	var places []Place
	for range 200 {
		p, _ := r.Arrive(ev, Board{})
		places = append(places, p)
	}
	if places[len(places)-1].Group != 0 {
		t.Skip("the machine took past the onsale to make 200 arrivals")
	}
	for g := range 3 {
		eventually(t, "the next arrival group", wait, func() bool { return r.groupOf(ev.OnsaleAt, time.Now()) > uint64(g) })
		for range 50 {
			p, _ := r.Arrive(ev, Board{})
			places = append(places, p)
		}
	}
	if err := r.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	// The order the cursor passes the places in: the board at which each was first passed.
	passedAt := make([]int, len(places))
	for i := range passedAt {
		passedAt[i] = -1
	}
	boards := 0
	tickUntil(t, r, ev, "every place passed", func(b Board) bool {
		boards++
		all := true
		for i, p := range places {
			if passedAt[i] < 0 && p.Passed(b) {
				passedAt[i] = boards
			}
			all = all && passedAt[i] >= 0
		}
		return all
	})
	for i, p := range places {
		for j, q := range places {
			if (p.Group < q.Group || p.Group == q.Group && p.Tiebreak < q.Tiebreak) && passedAt[i] > passedAt[j] {
				t.Fatalf("place %d (group %d) passed at board %d, after place %d (group %d) at %d",
					i, p.Group, passedAt[i], j, q.Group, passedAt[j])
			}
		}
	}
	// Within the pre-queue the order is the tiebreaks': a random permutation.
	pre := make([]int, 200)
	for i := range pre {
		pre[i] = i
	}
	sort.Slice(pre, func(a, b int) bool { return places[pre[a]].Tiebreak < places[pre[b]].Tiebreak })
	rank := make([]int, 200)
	for k, i := range pre {
		rank[i] = k
	}
	if rho := spearman(rank); rho > 0.3 || rho < -0.3 {
		t.Errorf("pre-queue: rank correlation of arrival and admission %.2f, want near 0 (shuffled)", rho)
	}
	if g := places[len(places)-1].Group; g < 3 {
		t.Errorf("the last arrivals: got group %d, want 3 or more", g)
	}
}

// TestFrontCursorKeepsToTheRate: the cursor passes no more places than the rate's
// tokens since the draw (and the bucket's cap) allow, yet passes them.
func TestFrontCursorKeepsToTheRate(t *testing.T) {
	t.Parallel()
	r, _, _ := frontRoom(t, nil)
	const rate = 20.0
	ev := Event{ID: 13, OnsaleAt: time.Now().Add(-time.Second), Settings: Settings{Enabled: true, Slots: 100000, Rate: rate}}
	for range 2000 {
		r.Arrive(ev, Board{})
	}
	if err := r.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	b := tickUntil(t, r, ev, "40 places passed", func(b Board) bool { return b.Passed >= 40 })
	most := rate*time.Since(start).Seconds() + r.bucketCap(ev.Settings) + 1
	if b.Passed > most {
		t.Errorf("passed %.0f places in %v at %g a second; want at most %.0f", b.Passed, time.Since(start), rate, most)
	}
}

// TestFrontNoShowsDoNotBlock: passed places that nobody claims stop taking slots once
// their claim window is over, and the cursor moves on; with a long window (the
// negative control) it stops at the slots.
func TestFrontNoShowsDoNotBlock(t *testing.T) {
	t.Parallel()
	for _, window := range []time.Duration{200 * time.Millisecond, time.Hour} {
		r, _, _ := frontRoom(t, func(o *Options) { o.ClaimWindow = window })
		ev := Event{ID: 14, OnsaleAt: time.Now().Add(-time.Second), Settings: Settings{Enabled: true, Slots: 5, Rate: 1000}}
		for range 30 {
			r.Arrive(ev, Board{})
		}
		if err := r.Flush(t.Context()); err != nil {
			t.Fatal(err)
		}
		if window < time.Minute {
			tickUntil(t, r, ev, "the cursor past 30 no-shows", func(b Board) bool { return b.Passed >= 29.5 })
			continue
		}
		b := tickUntil(t, r, ev, "the slots' worth passed", func(b Board) bool { return b.Passed >= 4.5 })
		for range 20 {
			b = tickUntil(t, r, ev, "a tick", func(Board) bool { return true })
		}
		if b.Passed > 5.5 {
			t.Errorf("claim window of an hour: passed %.1f no-shows, want the 5 slots' worth", b.Passed)
		}
	}
}

// TestFrontClaim: a passed place admits its claimer once, with a token that verifies;
// the same visitor claiming again keeps that admission; another visitor with the same
// place is refused; a place not yet passed waits; a place whose admission ended is used.
func TestFrontClaim(t *testing.T) {
	t.Parallel()
	r, _, _ := frontRoom(t, nil)
	ev := Event{ID: 15, OnsaleAt: time.Now().Add(-time.Second), Settings: Settings{Enabled: true, Slots: 1, Rate: 1000}}
	first, _ := r.Arrive(ev, Board{})
	if err := r.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	tickUntil(t, r, ev, "the first place passed", first.Passed)
	eventually(t, "the next arrival group", wait, func() bool { return r.groupOf(ev.OnsaleAt, time.Now()) > first.Group })
	second, _ := r.Arrive(ev, Board{})
	if err := r.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	if st, err := r.Claim(ctx, ev, second, "v2", ""); err != nil || st.Admitted || !st.Queued {
		t.Errorf("claim before the cursor: got %+v, %v; want queued", st, err)
	}
	st, err := r.Claim(ctx, ev, first, "v1", "")
	if err != nil || !st.Admitted {
		t.Fatalf("claim a passed place: got %+v, %v; want admitted", st, err)
	}
	if _, err := r.Verify(st.Token, ev.ID, "v1"); err != nil {
		t.Errorf("the claim's token: %v", err)
	}
	if again, err := r.Claim(ctx, ev, first, "v1", ""); err != nil || !again.Admitted || !again.ExpiresAt.Equal(st.ExpiresAt) {
		t.Errorf("claim again: got %+v, %v; want the same admission", again, err)
	}
	if _, err := r.Claim(ctx, ev, first, "v3", ""); !errors.Is(err, ErrPlaceClaimed) {
		t.Errorf("another visitor claims the place: got %v, want ErrPlaceClaimed", err)
	}
	// The one slot is taken by v1: the cursor does not pass the second place.
	for range 10 {
		tickUntil(t, r, ev, "a tick", func(Board) bool { return true })
	}
	if b, _ := r.Board(ctx, ev); second.Passed(b) {
		t.Errorf("the second place passed while the one slot is taken (board %+v)", b)
	}
	if err := r.Leave(ctx, ev.ID, "v1"); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Claim(ctx, ev, first, "v1", ""); !errors.Is(err, ErrPlaceUsed) {
		t.Errorf("claim after the admission ended: got %v, want ErrPlaceUsed", err)
	}
	tickUntil(t, r, ev, "the second place passed once the slot came back", second.Passed)
	if st, err := r.Claim(ctx, ev, second, "v2", ""); err != nil || !st.Admitted {
		t.Errorf("claim the second place: got %+v, %v; want admitted", st, err)
	}
}

// TestFrontClaimSentAgain: a claim whose answer was lost, sent again with its key by a
// browser that never learned the visitor the first one made, is admitted as that
// visitor, with the same admission and no second slot; another key, or none, is
// another visitor's claim and refused; once the admission has ended the key admits
// nothing. Without the key's check (the negative control: a key the first claim did
// not send) the retry is refused as the thief is.
func TestFrontClaimSentAgain(t *testing.T) {
	t.Parallel()
	r, _, _ := frontRoom(t, nil)
	ev := Event{ID: 16, OnsaleAt: time.Now().Add(-time.Second), Settings: Settings{Enabled: true, Slots: 1, Rate: 1000}}
	p, _ := r.Arrive(ev, Board{})
	if err := r.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	tickUntil(t, r, ev, "the place passed", p.Passed)
	ctx := t.Context()
	first, err := r.Claim(ctx, ev, p, "v1", "key-1")
	if err != nil || !first.Admitted || first.Visitor != "" {
		t.Fatalf("the first claim: got %+v, %v; want admitted as the caller", first, err)
	}
	again, err := r.Claim(ctx, ev, p, "v2", "key-1")
	if err != nil || !again.Admitted || again.Visitor != "v1" || !again.ExpiresAt.Equal(first.ExpiresAt) {
		t.Fatalf("the claim sent again with its key: got %+v, %v; want v1's admission", again, err)
	}
	if _, err := r.Verify(again.Token, ev.ID, "v1"); err != nil {
		t.Errorf("the token answered again: %v, want v1's", err)
	}
	for _, key := range []string{"key-2", ""} {
		if _, err := r.Claim(ctx, ev, p, "v3", key); !errors.Is(err, ErrPlaceClaimed) {
			t.Errorf("a claim of the place with key %q: got %v, want ErrPlaceClaimed", key, err)
		}
	}
	if n, err := r.Counts(ctx, ev.ID); err != nil || n.Active != 1 {
		t.Errorf("active admissions after the claim sent again: %+v, %v; want the one", n, err)
	}
	if err := r.Leave(ctx, ev.ID, "v1"); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Claim(ctx, ev, p, "v4", "key-1"); !errors.Is(err, ErrPlaceUsed) {
		t.Errorf("the key once the admission ended: got %v, want ErrPlaceUsed", err)
	}
}
