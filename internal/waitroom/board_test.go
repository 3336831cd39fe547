package waitroom

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"boxoffice/internal/dbtest"
)

func board(t *testing.T, r *Room, ev Event) Board {
	t.Helper()
	b, err := r.Board(t.Context(), ev)
	if err != nil {
		t.Fatalf("Board: %v", err)
	}
	return b
}

// TestBoardGivesPositionAndTurn: a waiting page that keeps its Number and Place from
// one look can tell from the event's board, the same for every waiter, where it stands
// and when its turn has come; a pre-queue waiter's place, given at the join, is the one
// the draw orders by. 30 visitors wait in the pre-queue and 10 join after the
// draw; the admitter lets 25 in. Then for every visitor: admitted exactly when the
// board's Head has reached the place it was given, and a waiter's position is its
// Number less the board's Served. One waiter leaves: those behind it read a position
// one too high from the board until they look again, which sets it right.
func TestBoardGivesPositionAndTurn(t *testing.T) {
	t.Parallel()
	rdb, prefix := dbtest.Redis(t)
	const pre, later, slots = 30, 10, 25
	ev := Event{ID: 1, OnsaleAt: redisNow(t, rdb).Add(time.Second),
		Settings: Settings{Enabled: true, Slots: slots, Rate: 50, TokenTTL: time.Minute}}
	r := newRoom(t, rdb, prefix, Hooks{Events: events(ev)}, Options{Tick: 20 * time.Millisecond})
	r.seed(2)

	var preplaces []float64 // the places given at the pre-queue joins
	for i := range pre {
		st := join(t, r, ev, visitor("pre", i))
		if !st.PreQueue || st.Number != 0 || st.Place < 0 || st.Place >= 1 || st.LookAfter <= 0 {
			t.Fatalf("pre-queue join %d: got %+v, want no number before the draw, a drawn place below 1 and a time to look again", i, st)
		}
		preplaces = append(preplaces, st.Place)
	}
	if b := board(t, r, ev); !b.PreQueue || b.Waiting != pre || b.Drawn != pre || b.Served != 0 || b.Head != -1 || !b.DrawAt.Equal(ev.OnsaleAt) {
		t.Fatalf("board before the draw: got %+v, want the pre-queue of %d, all drawn places, nobody served, no head", b, pre)
	}
	eventually(t, "the onsale by Redis's clock", wait, func() bool { return !redisNow(t, rdb).Before(ev.OnsaleAt.Add(10 * time.Millisecond)) })

	// Every visitor's number and place, from one look after the draw, before anyone
	// is let in (the admitter is not running yet).
	var all []string
	for i := range pre {
		all = append(all, visitor("pre", i))
	}
	for i := range later {
		v := visitor("later", i)
		join(t, r, ev, v)
		all = append(all, v)
	}
	places := map[string]float64{}
	numbers := map[string]int64{}
	for _, v := range all {
		st := status(t, r, ev, v)
		if !st.Queued || st.Number != int64(st.Position) || st.Place < 0 {
			t.Fatalf("%s before any admission: got %+v, want queued with number = position and a place", v, st)
		}
		places[v], numbers[v] = st.Place, st.Number
	}
	for i, p := range preplaces {
		if v := visitor("pre", i); places[v] != p {
			t.Errorf("%s: place %v after the draw, %v at the join: the draw orders by the place given", v, places[v], p)
		}
	}

	stop := run(t, r)
	eventually(t, "the slots filled", wait, func() bool { return active(t, rdb, prefix, ev.ID) == slots })
	stop()

	b := board(t, r, ev)
	if b.PreQueue || b.Served != slots || b.Waiting != pre+later-slots || b.Drawn != pre-slots || b.Head < 0 || b.PerPlace <= 0 {
		t.Fatalf("board after %d admissions: got %+v, want %d served, %d waiting (%d of them drawn), a head and a wait per place",
			slots, b, slots, pre+later-slots, pre-slots)
	}
	var behind []string // waiters, in queue order
	for _, v := range all {
		st := status(t, r, ev, v)
		if turn := places[v] <= b.Head; turn != st.Admitted {
			t.Errorf("%s: place %v, board's head %v: turn come %v, but admitted %v", v, places[v], b.Head, turn, st.Admitted)
		}
		if st.Admitted {
			continue
		}
		if got := int(numbers[v] - b.Served); got != st.Position {
			t.Errorf("%s: number %d less served %d is %d, want its position %d", v, numbers[v], b.Served, got, st.Position)
		}
		behind = append(behind, v)
	}
	if len(behind) != pre+later-slots {
		t.Fatalf("got %d waiting, want %d", len(behind), pre+later-slots)
	}

	// The first waiter leaves: the board's figure for the others is one too high until
	// they look again.
	byPos := make([]string, len(behind))
	for _, v := range behind {
		byPos[numbers[v]-b.Served-1] = v
	}
	if err := r.Leave(t.Context(), ev.ID, byPos[0]); err != nil {
		t.Fatal(err)
	}
	b = board(t, r, ev)
	for _, v := range byPos[1:] {
		st := status(t, r, ev, v)
		if est := int(numbers[v] - b.Served); est != st.Position+1 {
			t.Errorf("%s after one ahead left: board's figure %d, want its position %d plus the one who left", v, est, st.Position)
		}
		if int(st.Number-b.Served) != st.Position {
			t.Errorf("%s: a fresh look's number %d less served %d, want its position %d", v, st.Number, b.Served, st.Position)
		}
	}
}

// TestLikelyGone: once 200 admissions have been made, the board says how many more
// the unsold places (held ones included) serve, at the places each admission took
// since the draw; a waiter further back than that is told the tickets may be gone
// before its turn, and shown no wait. 250 visitors go straight in (counted like the
// queue's admissions) and take three places each of 1,000 free, 20 of them held: the
// 270 unsold serve 90 more, so of the 150 waiting the 90th is shown a wait and the
// 91st the warning. Before 200 admissions, and with nothing taken, there is no figure
// and nobody is warned.
func TestLikelyGone(t *testing.T) {
	t.Parallel()
	rdb, prefix := dbtest.Redis(t)
	var free, unsold atomic.Int64
	free.Store(1000)
	unsold.Store(1000)
	ev := open(1, Settings{Slots: 250, Rate: 1000, TokenTTL: time.Minute})
	hooks := Hooks{Events: events(ev), Stock: func(context.Context, int64) (Stock, error) {
		return Stock{Unsold: int(unsold.Load()), Free: int(free.Load())}, nil
	}}
	r := newRoom(t, rdb, prefix, hooks, Options{Tick: 20 * time.Millisecond, Refresh: 20 * time.Millisecond})
	run(t, r)
	eventually(t, "the stock figure", wait, func() bool { return board(t, r, ev).SeatsLeft == 1000 })
	visitors := make([]string, 400)
	for i := range visitors {
		visitors[i] = visitor("v", i)
		st := join(t, r, ev, visitors[i])
		if i == 150 && (board(t, r, ev).LastsFor != -1 || st.LikelyGone) {
			t.Fatalf("after 150 admissions: LastsFor %d, LikelyGone %v; want no figure (-1) and no warning",
				board(t, r, ev).LastsFor, st.LikelyGone)
		}
	}
	if b := board(t, r, ev); b.Waiting != 150 || b.LastsFor != -1 {
		t.Fatalf("250 admitted, nothing taken: board waiting %d, LastsFor %d; want 150 and -1", b.Waiting, b.LastsFor)
	}
	if st := status(t, r, ev, visitors[399]); st.LikelyGone {
		t.Fatalf("nothing taken: the last waiter is warned: %+v", st)
	}
	unsold.Store(1000 - 3*250 + 20)
	free.Store(1000 - 3*250)
	eventually(t, "the board's LastsFor", wait, func() bool { return board(t, r, ev).LastsFor == 90 })
	for _, c := range []struct {
		pos  int
		gone bool
	}{{1, false}, {90, false}, {91, true}, {150, true}} {
		st := status(t, r, ev, visitors[250+c.pos-1])
		if st.Position != c.pos || st.LikelyGone != c.gone {
			t.Errorf("waiter %d: position %d, LikelyGone %v; want %d and %v", 250+c.pos-1, st.Position, st.LikelyGone, c.pos, c.gone)
		}
		if st.LikelyGone && (st.ETA != 0 || st.ETAMin != 0 || st.ETAMax != 0) {
			t.Errorf("position %d, likely gone, shown a wait: ETA %v (%v to %v)", c.pos, st.ETA, st.ETAMin, st.ETAMax)
		}
	}
}
