package web

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/labstack/echo/v4"

	"boxoffice/internal/booking"
)

// The seat map is the API's biggest answer: a 50,000-seat stadium is about 5 MB of
// JSON, 0.6 MB gzipped. Its body is made once for each copy of the map the booking
// service hands out (a copy is shared by every reader for up to 100 ms, and a CDN
// asks once a second per edge), and kept both plain and gzipped at BestSpeed: at
// Echo's middleware's level 5 the compression alone had been 7 % of the server's CPU
// during make onsale's sale, for one map a second.
type mapBodies struct {
	mu sync.Mutex
	m  map[int64]*mapBody // event id → the body of its latest copy
}

// mapBody is one copy of an event's map, encoded.
type mapBody struct {
	version   int64
	at        time.Time
	plain, gz []byte
}

// of returns the body of m, encoding it unless it is the copy encoded last.
func (b *mapBodies) of(m booking.SeatMap) (*mapBody, error) {
	b.mu.Lock()
	cur := b.m[m.EventID]
	b.mu.Unlock()
	if cur != nil && cur.version == m.Version && cur.at.Equal(m.At) {
		return cur, nil
	}
	body, err := encodeSeatMap(m)
	if err != nil {
		return nil, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.m == nil {
		b.m = map[int64]*mapBody{}
	}
	if cur := b.m[m.EventID]; cur == nil || !cur.at.After(body.at) {
		b.m[m.EventID] = body
	}
	return body, nil
}

func encodeSeatMap(m booking.SeatMap) (*mapBody, error) {
	out := seatMapJSON{EventID: m.EventID, Seats: make([]mapSeatJSON, len(m.Seats)), GATiers: make([]gaTierJSON, len(m.GATiers))}
	for i, st := range m.Seats {
		out.Seats[i] = mapSeatJSON{ID: st.ID, Section: st.Section, Row: st.Row, Number: st.Number,
			PriceCents: st.PriceCents, Status: st.Status, X: st.X, Y: st.Y, Accessible: st.Accessible}
	}
	for i, t := range m.GATiers {
		out.GATiers[i] = gaTierJSON{ID: t.ID, Name: t.Name, PriceCents: t.PriceCents, Remaining: t.Remaining}
	}
	var plain bytes.Buffer
	if err := json.NewEncoder(&plain).Encode(out); err != nil {
		return nil, err
	}
	var gz bytes.Buffer
	gz.Grow(plain.Len() / 6)
	w, err := gzip.NewWriterLevel(&gz, gzip.BestSpeed)
	if err != nil {
		return nil, err
	}
	if _, err := w.Write(plain.Bytes()); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return &mapBody{version: m.Version, at: m.At, plain: plain.Bytes(), gz: gz.Bytes()}, nil
}

// send writes the body, gzipped to a client that takes it.
func (b *mapBody) send(c echo.Context) error {
	h := c.Response().Header()
	h.Add("Vary", "Accept-Encoding")
	if strings.Contains(c.Request().Header.Get("Accept-Encoding"), "gzip") {
		h.Set("Content-Encoding", "gzip")
		return c.Blob(http.StatusOK, echo.MIMEApplicationJSON, b.gz)
	}
	return c.Blob(http.StatusOK, echo.MIMEApplicationJSON, b.plain)
}
