package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// seatBoard is the seat map as the buyers see it: one copy for the whole crowd,
// fetched again every MapEvery, where a browser would keep its own copy current
// through the live stream. Buyers choose seats from it, so they choose from a map up to
// a second or so old and sometimes lose the seat to someone faster, as people do.
type seatBoard struct {
	cur atomic.Pointer[board]

	mu     sync.Mutex
	layout []seatJSON // the seats of the last full read, in the answer's order
}

// board is one fetch of the map.
type board struct {
	at                    time.Time
	sections              [][][]seatJSON // section → rows, front first → seats by number
	available, held, sold int
	gaTier                int64 // a standing tier with places left, 0 if none
	gaRemaining           int
}

// fetch reads the map through the API.
func (sb *seatBoard) fetch(ctx context.Context, c *client, eventPath string) (*board, error) {
	var raw []byte
	a, err := c.do(ctx, http.MethodGet, "/api/v1/events/"+eventPath+"/seatmap", nil, &raw)
	if err != nil {
		return nil, err
	}
	if a.Status != http.StatusOK {
		return nil, &statusError{"seat map", a}
	}
	seats, tiers, err := sb.parse(raw)
	if err != nil {
		return nil, err
	}
	b := newBoard(seats, tiers)
	sb.cur.Store(b)
	return b, nil
}

// parse reads a seat map answer. A stadium's is about 5 MB of JSON, and decoding it
// whole every second was a third of the simulator's CPU in make onsale (the simulator
// shares the server's cores). Only the seats' statuses change during a sale, so once
// the map has been read whole, parse reads the ids and statuses alone, in the
// answer's order, and reads the whole map again whenever the ids are not those of
// the last whole read.
func (sb *seatBoard) parse(raw []byte) ([]seatJSON, []gaTierJSON, error) {
	sb.mu.Lock()
	defer sb.mu.Unlock()
	if sb.layout != nil {
		if seats, ok := statusesOf(raw, sb.layout); ok {
			tiers, err := gaTiersOf(raw)
			if err == nil {
				return seats, tiers, nil
			}
		}
	}
	var m seatMapJSON
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, nil, fmt.Errorf("seat map: %w", err)
	}
	sb.layout = m.Seats // newBoard copies what it keeps; statusesOf clones before writing
	return m.Seats, m.GATiers, nil
}

var (
	seatsKey  = []byte(`"seats":`)
	gaKey     = []byte(`"gaTiers":`)
	idKey     = []byte(`"id":`)
	statusKey = []byte(`"status":"`)
)

// statusesOf is layout with the statuses of the seat map in raw, if raw lists exactly
// layout's seats in the same order. It scans the bytes of the seats' array for its
// keys: a key's quotes cannot occur unescaped inside a JSON string, so every match is
// a key of a seat object (the standing tiers, which have ids too, are left out).
func statusesOf(raw []byte, layout []seatJSON) ([]seatJSON, bool) {
	from := bytes.Index(raw, seatsKey)
	if from < 0 {
		return nil, false
	}
	r := raw[from:]
	if g := bytes.Index(r, gaKey); g >= 0 {
		r = r[:g]
	}
	out := slices.Clone(layout)
	n := 0
	for rest := r; ; n++ {
		k := bytes.Index(rest, idKey)
		if k < 0 {
			break
		}
		rest = bytes.TrimLeft(rest[k+len(idKey):], " ")
		end := 0
		for end < len(rest) && rest[end] >= '0' && rest[end] <= '9' {
			end++
		}
		id, err := strconv.ParseInt(string(rest[:end]), 10, 64)
		if err != nil || n >= len(out) || out[n].ID != id {
			return nil, false
		}
		rest = rest[end:]
	}
	if n != len(out) {
		return nil, false
	}
	n = 0
	for rest := r; ; n++ {
		k := bytes.Index(rest, statusKey)
		if k < 0 {
			break
		}
		rest = rest[k+len(statusKey):]
		end := bytes.IndexByte(rest, '"')
		if end < 0 || n >= len(out) {
			return nil, false
		}
		switch v := rest[:end]; string(v) { // no allocation for the usual three
		case "available":
			out[n].Status = "available"
		case "held":
			out[n].Status = "held"
		case "sold":
			out[n].Status = "sold"
		default:
			out[n].Status = string(v)
		}
		rest = rest[end:]
	}
	return out, n == len(out)
}

// gaTiersOf decodes the map's standing tiers alone: the value after its key.
func gaTiersOf(raw []byte) ([]gaTierJSON, error) {
	g := bytes.Index(raw, gaKey)
	if g < 0 {
		return nil, nil
	}
	var tiers []gaTierJSON
	err := json.NewDecoder(bytes.NewReader(raw[g+len(gaKey):])).Decode(&tiers)
	return tiers, err
}

// newBoard arranges the seats by section and row and counts them.
func newBoard(seats []seatJSON, tiers []gaTierJSON) *board {
	b := &board{at: time.Now()}
	bySection := map[string]map[string][]seatJSON{}
	var names []string
	for _, st := range seats {
		switch st.Status {
		case "available":
			b.available++
		case "held":
			b.held++
		case "sold":
			b.sold++
		}
		rows := bySection[st.Section]
		if rows == nil {
			rows = map[string][]seatJSON{}
			bySection[st.Section] = rows
			names = append(names, st.Section)
		}
		rows[st.Row] = append(rows[st.Row], st)
	}
	for _, name := range names {
		labels := make([]string, 0, len(bySection[name]))
		for l := range bySection[name] {
			labels = append(labels, l)
		}
		// Rows are A..Z, then AA, AB…: the front row has the shortest, first label.
		slices.SortFunc(labels, func(x, y string) int { return cmp.Or(cmp.Compare(len(x), len(y)), cmp.Compare(x, y)) })
		rows := make([][]seatJSON, len(labels))
		for i, l := range labels {
			r := bySection[name][l]
			slices.SortFunc(r, func(x, y seatJSON) int { return cmp.Compare(x.Number, y.Number) })
			rows[i] = r
		}
		b.sections = append(b.sections, rows)
	}
	for _, t := range tiers {
		b.gaRemaining += t.Remaining
		if t.Remaining > 0 && b.gaTier == 0 {
			b.gaTier = t.ID
		}
	}
	return b
}

// pick chooses qty seats side by side that the map shows available: in a section
// drawn at random, in a row drawn with a strong lean to the front (the cube of a
// uniform number), else a row or two further back. Nil when it finds none.
func (sb *seatBoard) pick(rng *rand.Rand, qty int) []int64 {
	b := sb.cur.Load()
	if b == nil || len(b.sections) == 0 {
		return nil
	}
	for range 4 {
		rows := b.sections[rng.IntN(len(b.sections))]
		first := int(float64(len(rows)) * math.Pow(rng.Float64(), 3))
		for r := first; r < min(len(rows), first+3); r++ {
			if ids := adjacent(rows[r], qty, rng); ids != nil {
				return ids
			}
		}
	}
	return nil
}

// adjacent finds a random stretch of qty adjacent available seats in a row.
func adjacent(row []seatJSON, qty int, rng *rand.Rand) []int64 {
	var starts []int
	n := 0
	for i, st := range row {
		if st.Status == "available" && (n == 0 || row[i-1].Number == st.Number-1) {
			n++
		} else if st.Status == "available" {
			n = 1
		} else {
			n = 0
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
		ids[i] = row[s+i].ID
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
