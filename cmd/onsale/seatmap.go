package main

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"net/url"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// seatBoard is the seat map as the buyers see it: one copy for the whole crowd,
// fetched again every MapEvery, where a browser would keep its own copy current
// through the live stream. Buyers choose seats from it, so they choose from a map up to
// a second or so old and sometimes lose the seat to someone faster, as people do.
//
// It reads the map as a client that follows it should: the statuses every time (a
// letter a seat, about 50 KB for a stadium), the layout (5 MB) once, and again only
// when the statuses name another layout.
type seatBoard struct {
	cur atomic.Pointer[board]

	mu  sync.Mutex
	lay *layout // the layout of the last read
}

// layout is the map's seats without their statuses, arranged for picking.
type layout struct {
	id       string
	seats    []seatJSON  // in the statuses' order; Status empty
	sections [][][]int32 // section → rows, front first → indices of seats by number
	where    map[int64]seatPlace
}

// seatPlace is where a seat is in layout.sections.
type seatPlace struct{ section, row int32 }

// board is one fetch of the map.
type board struct {
	at                    time.Time
	lay                   *layout
	statuses              string // a letter a seat of lay: a available, h held, s sold
	available, held, sold int
	gaTier                int64 // a standing tier with places left, 0 if none
	gaRemaining           int
}

// fetch reads the map through the API: its statuses, and its layout if it is not the
// one read last.
func (sb *seatBoard) fetch(ctx context.Context, c *client, eventPath string) (*board, error) {
	var st statusesJSON
	a, err := c.do(ctx, http.MethodGet, "/api/v1/events/"+eventPath+"/seatmap/statuses", nil, &st)
	if err != nil {
		return nil, err
	}
	if a.Status != http.StatusOK {
		return nil, &statusError{"seat statuses", a}
	}
	lay, err := sb.layoutOf(ctx, c, eventPath, st.Layout)
	if err != nil {
		return nil, err
	}
	b, err := newBoard(lay, st)
	if err != nil {
		return nil, err
	}
	sb.cur.Store(b)
	return b, nil
}

// layoutOf is the layout of that id: the last one read, or read now.
func (sb *seatBoard) layoutOf(ctx context.Context, c *client, eventPath, id string) (*layout, error) {
	sb.mu.Lock()
	defer sb.mu.Unlock()
	if sb.lay != nil && sb.lay.id == id {
		return sb.lay, nil
	}
	var l layoutJSON
	a, err := c.do(ctx, http.MethodGet, "/api/v1/events/"+eventPath+"/seatmap/layout?v="+url.QueryEscape(id), nil, &l)
	if err != nil {
		return nil, err
	}
	if a.Status != http.StatusOK {
		return nil, &statusError{"seat layout", a}
	}
	if l.Layout != id {
		return nil, fmt.Errorf("seat layout: asked for %q, got %q (the map changed meanwhile)", id, l.Layout)
	}
	sb.lay = arrange(l)
	return sb.lay, nil
}

// arrange sorts the layout's seats by section, row and number.
func arrange(l layoutJSON) *layout {
	lay := &layout{id: l.Layout, seats: l.Seats, where: make(map[int64]seatPlace, len(l.Seats))}
	bySection := map[string]map[string][]int32{}
	var names []string
	for i, st := range l.Seats {
		rows := bySection[st.Section]
		if rows == nil {
			rows = map[string][]int32{}
			bySection[st.Section] = rows
			names = append(names, st.Section)
		}
		rows[st.Row] = append(rows[st.Row], int32(i))
	}
	for _, name := range names {
		labels := make([]string, 0, len(bySection[name]))
		for l := range bySection[name] {
			labels = append(labels, l)
		}
		// Rows are A..Z, then AA, AB…: the front row has the shortest, first label.
		slices.SortFunc(labels, func(x, y string) int { return cmp.Or(cmp.Compare(len(x), len(y)), cmp.Compare(x, y)) })
		rows := make([][]int32, len(labels))
		for i, label := range labels {
			r := bySection[name][label]
			slices.SortFunc(r, func(x, y int32) int { return cmp.Compare(l.Seats[x].Number, l.Seats[y].Number) })
			rows[i] = r
			for _, k := range r {
				lay.where[l.Seats[k].ID] = seatPlace{int32(len(lay.sections)), int32(i)}
			}
		}
		lay.sections = append(lay.sections, rows)
	}
	return lay
}

// newBoard counts the statuses of the layout's seats.
func newBoard(lay *layout, st statusesJSON) (*board, error) {
	if len(st.Statuses) != len(lay.seats) {
		return nil, fmt.Errorf("seat statuses: %d for a layout of %d seats", len(st.Statuses), len(lay.seats))
	}
	b := &board{at: time.Now(), lay: lay, statuses: st.Statuses}
	for i := range len(st.Statuses) {
		switch st.Statuses[i] {
		case 'a':
			b.available++
		case 'h':
			b.held++
		case 's':
			b.sold++
		default:
			return nil, fmt.Errorf("seat statuses: %q is no status", st.Statuses[i])
		}
	}
	for _, t := range st.GATiers {
		b.gaRemaining += t.Remaining
		if t.Remaining > 0 && b.gaTier == 0 {
			b.gaTier = t.ID
		}
	}
	return b, nil
}

// pick chooses qty seats side by side that the map shows available: in a section
// drawn at random, in a row drawn with a strong lean to the front (the cube of a
// uniform number), else a row or two further back. Nil when it finds none.
func (sb *seatBoard) pick(rng *rand.Rand, qty int) []int64 {
	b := sb.cur.Load()
	if b == nil || len(b.lay.sections) == 0 {
		return nil
	}
	for range 4 {
		rows := b.lay.sections[rng.IntN(len(b.lay.sections))]
		first := int(float64(len(rows)) * math.Pow(rng.Float64(), 3))
		for r := first; r < min(len(rows), first+3); r++ {
			if ids := b.adjacent(rows[r], qty, rng); ids != nil {
				return ids
			}
		}
	}
	return nil
}

// adjacent finds a random stretch of qty adjacent available seats in a row.
func (b *board) adjacent(row []int32, qty int, rng *rand.Rand) []int64 {
	seats := b.lay.seats
	var starts []int
	n := 0
	for i, k := range row {
		if b.statuses[k] != 'a' {
			n = 0
		} else if n == 0 || seats[row[i-1]].Number == seats[k].Number-1 {
			n++
		} else {
			n = 1
		}
		if n >= qty {
			starts = append(starts, i-qty+1)
		}
	}
	if len(starts) == 0 {
		return nil
	}
	s := starts[rng.IntN(len(starts))]
	ids := make([]int64, qty)
	for i := range ids {
		ids[i] = seats[row[s+i]].ID
	}
	return ids
}

// gaTier is a standing tier the map shows with places left, 0 if none.
func (sb *seatBoard) gaTier() int64 {
	if b := sb.cur.Load(); b != nil {
		return b.gaTier
	}
	return 0
}

// statusError is an answer the simulator itself (not a buyer) did not expect.
type statusError struct {
	what string
	a    answer
}

func (e *statusError) Error() string { return e.what + ": " + e.a.kind() + " " + e.a.Err.Message }
