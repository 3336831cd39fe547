package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"boxoffice/internal/benchkit"
)

// sseSide is one server measured: its stream's URL and how to stop it.
type sseSide struct {
	name  string
	url   string // the stream of the bench event
	close func()
}

// startBoxoffice is boxoffice's side: the real program on loopback, its stream of the
// bench event. Its warnings (resets, failures) show on stderr; a dropped slow stream
// is counted as ended.
func startBoxoffice(ctx context.Context, dbURL, redisURL, prefix string) (sseSide, error) {
	warn := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	p, err := benchkit.StartProgram(ctx, benchkit.ProgramOptions{DatabaseURL: dbURL, RedisURL: redisURL, Log: warn,
		// The streams' cap per instance is lifted: the bench asks for as many as it is told.
		Env: map[string]string{"REDIS_PREFIX": prefix, "DB_MAX_CONNS": "8", "STREAMS_MAX": "1000000"}})
	if err != nil {
		return sseSide{}, err
	}
	return sseSide{name: "boxoffice", url: p.URL + "/events/" + sseSlug + "/stream?v=0", close: p.Close}, nil
}

// minimalHub is the yardstick of BASELINE.md: a bare net/http server with one go-redis
// subscription, a log of recent changes, and per client a 100 ms tick that writes the
// seat ids changed since its last write.
type minimalHub struct {
	mu      sync.RWMutex
	changes []benchkit.SeatChange // the last few thousand, in version order
}

func startMinimal(ctx context.Context, redisURL, prefix string, eventID int64) (sseSide, error) {
	opt, err := redis.ParseURL(redisURL)
	if err != nil {
		return sseSide{}, err
	}
	rdb := redis.NewClient(opt)
	sub := benchkit.Subscribe(ctx, rdb, prefix, eventID)
	h := &minimalHub{}
	go func() {
		for m := range sub.Channel(redis.WithChannelSize(4096)) {
			var c benchkit.SeatChange
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
	srv, err := benchkit.Serve(h)
	if err != nil {
		_ = sub.Close()
		_ = rdb.Close()
		return sseSide{}, err
	}
	return sseSide{name: "minimal", url: srv.URL + "/stream", close: func() {
		_ = sub.Close()
		srv.Close()
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
