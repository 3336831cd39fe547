package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"

	"boxoffice/internal/app"
	"boxoffice/internal/booking"
	"boxoffice/internal/config"
	"boxoffice/internal/demo"
	"boxoffice/internal/live"
	"boxoffice/migrations"
	"boxoffice/views"
	"boxoffice/web"
)

// benchDB is the database the benchmark owns: dropped at the start of every run.
const benchDB = "boxoffice_ssebench"

// benchSlug names the benchmark's event.
const benchSlug = "ssebench"

// createBenchDB creates boxoffice_ssebench afresh next to the admin database, migrates
// it, creates a big event and returns the database URL and the event id.
func createBenchDB(ctx context.Context, adminURL string, seats int) (string, int64, error) {
	u, err := url.Parse(adminURL)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return "", 0, fmt.Errorf("DATABASE_URL: want a postgres:// URL")
	}
	for _, sql := range []string{"DROP DATABASE IF EXISTS " + benchDB + " WITH (FORCE)", "CREATE DATABASE " + benchDB} {
		if err := adminExec(ctx, adminURL, sql); err != nil {
			return "", 0, err
		}
	}
	u.Path = "/" + benchDB
	if _, err := migrations.Up(ctx, u.String()); err != nil {
		return "", 0, err
	}
	pool, err := pgxpool.New(ctx, u.String())
	if err != nil {
		return "", 0, err
	}
	defer pool.Close()
	id, err := demo.Create(ctx, pool, demo.BigSpec(benchSlug, seats, time.Now()))
	return u.String(), id, err
}

func dropBenchDB(ctx context.Context, adminURL string) error {
	return adminExec(ctx, adminURL, "DROP DATABASE IF EXISTS "+benchDB+" WITH (FORCE)")
}

func adminExec(ctx context.Context, adminURL, sql string) error {
	conn, err := pgx.Connect(ctx, adminURL)
	if err != nil {
		return fmt.Errorf("admin connection: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, sql); err != nil {
		return fmt.Errorf("%s: %w", sql, err)
	}
	return nil
}

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// side is one server measured: its URL and how to stop it.
type side struct {
	name  string
	url   string // the stream of the bench event
	close func()
}

// serve listens on loopback and serves h until the returned close.
func serve(h http.Handler) (string, func(), error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	go srv.Serve(ln) //nolint:errcheck // ends with Close
	return "http://" + ln.Addr().String(), func() { _ = srv.Close() }, nil
}

// startBoxoffice is boxoffice's side: the program as internal/app builds it, a live
// hub feeding its seat map cache, and web's stream handler rendering seats from that
// cache as the seat page's out-of-band fragments.
func startBoxoffice(ctx context.Context, dbURL, redisURL, prefix string, eventID int64, small bool) (side, error) {
	cfg, err := config.Load(func(k string) string {
		return map[string]string{"DATABASE_URL": dbURL, "REDIS_URL": redisURL, "REDIS_PREFIX": prefix, "DB_MAX_CONNS": "8"}[k]
	})
	if err != nil {
		return side{}, err
	}
	a, err := app.New(ctx, cfg, app.Options{Log: quiet})
	if err != nil {
		return side{}, err
	}
	// Resets and failures show on stderr; a dropped slow stream is counted as ended.
	warn := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	hub := live.NewHub(a.Redis, prefix, warn, live.HubOptions{
		Apply: a.Booking.ApplySeatChanges, Reset: a.Booking.ResyncSeatMap, Unwatched: a.Booking.SeatMapUnwatched,
	})
	h := web.NewStreamHandler(web.StreamOptions{
		Hub: hub, Fragments: fragments(a.Booking, small), SessionCookie: app.SessionCookie,
		Event: func(ctx context.Context, slug string) (int64, error) {
			ev, err := a.Booking.EventBySlug(ctx, slug)
			return ev.ID, err
		},
		MaxPerIP: 1 << 30, MaxStreams: 1 << 30, Log: warn,
	})
	base, stop, err := serve(h)
	if err != nil {
		hub.Close()
		_ = a.Close(ctx)
		return side{}, err
	}
	return side{name: "boxoffice", url: base + "/events/" + benchSlug + "/stream?v=0", close: func() {
		hub.Close()
		stop()
		_ = a.Close(context.WithoutCancel(ctx))
	}}, nil
}

// fragments renders seats as the seat page does for the stream: views.SeatsOOB. Small
// fragments carry the state alone (about 60 bytes a seat instead of 300), to tell the
// cost of the page's markup from the cost of the fan-out.
func fragments(b *booking.Service, small bool) func(context.Context, int64, []int64, bool) ([]byte, error) {
	return func(ctx context.Context, eventID int64, ids []int64, _ bool) ([]byte, error) {
		m, err := b.SeatMapSeats(ctx, eventID, ids)
		if err != nil {
			return nil, err
		}
		if small {
			var buf bytes.Buffer
			for _, s := range m.Seats {
				fmt.Fprintf(&buf, `<g id="seat-%d" class="%s" hx-swap-oob="true"></g>`, s.ID, s.Status)
			}
			return buf.Bytes(), nil
		}
		seats := make([]views.SeatView, len(m.Seats))
		for i, s := range m.Seats {
			seats[i] = views.SeatView{
				DOMID: "seat-" + strconv.FormatInt(s.ID, 10), Class: "seat " + s.Status + " p" + strconv.Itoa(s.PriceCents/100),
				Shape: s.Status, Transform: fmt.Sprintf("translate(%d %d)", s.X, s.Y), Accessible: s.Accessible,
				Label: fmt.Sprintf("%s row %s seat %d, %s", s.Section, s.Row, s.Number, s.Status),
			}
			if s.Status == booking.SeatAvailable {
				seats[i].Value = strconv.FormatInt(s.ID, 10)
			}
		}
		var buf bytes.Buffer
		err = views.SeatsOOB(seats).Render(ctx, &buf)
		return buf.Bytes(), err
	}
}

// minimalHub is the yardstick of BASELINE.md: a bare net/http server with one go-redis
// subscription, a log of recent changes, and per client a 100 ms tick that writes the
// seat ids changed since its last write.
type minimalHub struct {
	mu      sync.RWMutex
	changes []live.Change // the last few thousand, in version order
}

func startMinimal(ctx context.Context, redisURL, prefix string, eventID int64) (side, error) {
	opt, err := redis.ParseURL(redisURL)
	if err != nil {
		return side{}, err
	}
	rdb := redis.NewClient(opt)
	sub := live.Subscribe(ctx, rdb, prefix, eventID)
	h := &minimalHub{}
	go func() {
		for m := range sub.Channel(redis.WithChannelSize(4096)) {
			var c live.Change
			if json.Unmarshal([]byte(m.Payload), &c) != nil {
				continue
			}
			h.mu.Lock()
			if len(h.changes) >= 4096 {
				h.changes = append(h.changes[:0], h.changes[2048:]...)
			}
			h.changes = append(h.changes, c)
			h.mu.Unlock()
		}
	}()
	base, stop, err := serve(h)
	if err != nil {
		return side{}, err
	}
	return side{name: "minimal", url: base + "/stream", close: func() {
		_ = sub.Close()
		stop()
		_ = rdb.Close()
	}}, nil
}

func (h *minimalHub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rc := http.NewResponseController(w)
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	_ = rc.Flush()
	h.mu.RLock()
	cursor := int64(0)
	if n := len(h.changes); n > 0 {
		cursor = h.changes[n-1].Version
	}
	h.mu.RUnlock()
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	var ids []int64
	for {
		select {
		case <-r.Context().Done():
			return
		case <-t.C:
		}
		ids = ids[:0]
		last := cursor
		h.mu.RLock()
		for i := len(h.changes) - 1; i >= 0 && h.changes[i].Version > cursor; i-- {
			ids = append(ids, h.changes[i].SeatIDs...)
		}
		if n := len(h.changes); n > 0 {
			last = h.changes[n-1].Version
		}
		h.mu.RUnlock()
		if last == cursor {
			continue
		}
		cursor = last
		data, _ := json.Marshal(ids)
		if _, err := fmt.Fprintf(w, "id: %d\ndata: %s\n\n", cursor, data); err != nil {
			return
		}
		if rc.Flush() != nil {
			return
		}
	}
}
