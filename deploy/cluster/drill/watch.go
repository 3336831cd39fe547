package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"boxoffice/internal/benchkit"
)

// viewer is one live map as a browser keeps it: a snapshot, then the seat stream's
// changes, reconnecting with Last-Event-ID when the stream drops and fetching the map
// again when the server says it lost changes (reset).
type viewer struct {
	base, slug string
	event      int64

	mu         sync.Mutex
	seats      map[int64]string
	lastID     string
	streams    int // connections made
	resets     int
	changes    int
	lastChange time.Time
}

// seatRE reads one seat of an out-of-band fragment: its element id and its state.
var seatRE = regexp.MustCompile(`id="seat-(\d+)"[^>]*class="seat (avail|held|sold)`)

var stateOf = map[string]string{"avail": "available", "held": "held", "sold": "sold", "a": "available", "h": "held", "s": "sold"}

// snapshot fetches the whole map through the balancer, as a page load does.
func (v *viewer) snapshot(ctx context.Context) error {
	var layout struct {
		Layout string `json:"layout"`
		Seats  []struct {
			ID int64 `json:"id"`
		} `json:"seats"`
	}
	var st struct {
		Layout   string `json:"layout"`
		Statuses string `json:"statuses"`
	}
	b := newBuyer(v.base)
	for path, dst := range map[string]any{"layout": &layout, "statuses": &st} {
		code, body, err := b.call(ctx, http.MethodGet, fmt.Sprintf("/api/v1/events/%d/seatmap/%s", v.event, path), nil, nil)
		if err != nil {
			return err
		}
		if code != http.StatusOK {
			return fmt.Errorf("seatmap/%s: %d", path, code)
		}
		if err := json.Unmarshal(body, dst); err != nil {
			return err
		}
	}
	if layout.Layout != st.Layout || len(layout.Seats) != len(st.Statuses) {
		return fmt.Errorf("layout %s of %d seats, statuses of layout %s for %d", layout.Layout, len(layout.Seats), st.Layout, len(st.Statuses))
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	for i, s := range layout.Seats {
		v.seats[s.ID] = stateOf[st.Statuses[i:i+1]]
	}
	return nil
}

// follow keeps the stream open until ctx ends.
func (v *viewer) follow(ctx context.Context) {
	hc := &http.Client{}
	for ctx.Err() == nil {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, v.base+"/events/"+v.slug+"/stream?v=0", nil)
		if err != nil {
			return
		}
		req.Header.Set("Accept", "text/event-stream")
		v.mu.Lock()
		if v.lastID != "" {
			req.Header.Set("Last-Event-ID", v.lastID)
		}
		v.streams++
		v.mu.Unlock()
		if resp, err := hc.Do(req); err == nil {
			if resp.StatusCode == http.StatusOK {
				v.read(ctx, bufio.NewScanner(resp.Body))
			}
			resp.Body.Close()
		}
		benchkit.Sleep(ctx, 500*time.Millisecond) // as an EventSource retries
	}
}

func (v *viewer) read(ctx context.Context, sc *bufio.Scanner) {
	sc.Buffer(make([]byte, 64<<10), 8<<20)
	var id, kind string
	var data strings.Builder
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "id: "):
			id = line[4:]
		case strings.HasPrefix(line, "event: "):
			kind = line[7:]
		case strings.HasPrefix(line, "data: "):
			data.WriteString(line[6:])
		case line == "":
			if kind == "reset" {
				v.mu.Lock()
				v.resets++
				v.mu.Unlock()
				_ = v.snapshot(ctx) // a failed fetch shows in the final comparison
			}
			v.mu.Lock()
			for _, m := range seatRE.FindAllStringSubmatch(data.String(), -1) {
				n, _ := strconv.ParseInt(m[1], 10, 64)
				v.seats[n] = stateOf[m[2]]
				v.changes++
				v.lastChange = time.Now()
			}
			if id != "" {
				v.lastID = id
			}
			v.mu.Unlock()
			id, kind = "", ""
			data.Reset()
		}
	}
}

// differs counts the seats whose state the viewer shows other than the database's.
func (v *viewer) differs(db map[int64]string) int {
	v.mu.Lock()
	defer v.mu.Unlock()
	n := 0
	for id, s := range db {
		if v.seats[id] != s {
			n++
		}
	}
	return n
}

func dbStatuses(ctx context.Context, pool *pgxpool.Pool, event int64) (map[int64]string, error) {
	rows, err := pool.Query(ctx, `SELECT id, CASE WHEN sold_at IS NOT NULL THEN 'sold' WHEN seat_is_held(seats) THEN 'held' ELSE 'available' END
		FROM seats WHERE event_id = $1`, event)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[int64]string{}
	for rows.Next() {
		var id int64
		var s string
		if err := rows.Scan(&id, &s); err != nil {
			return nil, err
		}
		out[id] = s
	}
	return out, rows.Err()
}

func runWatch(ctx context.Context, args []string, env benchkit.Env) error {
	fs := benchkit.FlagSet("drill", "watch", env)
	base := fs.String("url", "", "the balancer")
	slug := fs.String("slug", "", "the event's slug")
	event := fs.Int64("event", 0, "the event's id")
	dbURL := fs.String("db", "", "the primary, to compare with at the end")
	n := fs.Int("viewers", 6, "viewers")
	dur := fs.Duration("for", time.Minute, "how long to watch before comparing")
	settle := fs.Duration("settle", 30*time.Second, "how long the maps may take to agree with the database after that")
	if err := fs.Parse(args); err != nil {
		return err
	}
	pool, err := pgxpool.New(ctx, *dbURL)
	if err != nil {
		return err
	}
	defer pool.Close()
	sctx, stop := context.WithCancel(ctx)
	defer stop()
	var wg sync.WaitGroup
	vs := make([]*viewer, *n)
	for i := range vs {
		vs[i] = &viewer{base: *base, slug: *slug, event: *event, seats: map[int64]string{}}
		if err := vs[i].snapshot(ctx); err != nil {
			return err
		}
		wg.Go(func() { vs[i].follow(sctx) })
	}
	fmt.Fprintf(env.Stdout, "watch: %d viewers on %s/events/%s/stream\n", *n, *base, *slug)
	benchkit.Sleep(ctx, *dur)
	deadline := time.Now().Add(*settle)
	var diff []int
	for {
		db, err := dbStatuses(ctx, pool, *event)
		if err != nil {
			return err
		}
		diff = diff[:0]
		total := 0
		for _, v := range vs {
			d := v.differs(db)
			diff = append(diff, d)
			total += d
		}
		if total == 0 || time.Now().After(deadline) || ctx.Err() != nil {
			break
		}
		benchkit.Sleep(ctx, time.Second)
	}
	stop()
	wg.Wait()
	streams, resets, changes, wrong := 0, 0, 0, 0
	for i, v := range vs {
		streams += v.streams
		resets += v.resets
		changes += v.changes
		wrong += diff[i]
	}
	fmt.Fprintf(env.Stdout, "watch: %d viewers, %d stream connections (%d reconnections), %d resets (map fetched again), %d seat changes seen; seats differing from the database at the end: %v\n",
		*n, streams, streams-*n, resets, changes, diff)
	if wrong > 0 {
		return errFailed
	}
	return nil
}
