package web

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
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
	mu    sync.Mutex
	m     map[int64]*mapBody    // event id → the body of its latest copy
	enc   map[int64]*mapEncoder // event id → its encoder
	swept time.Time             // when events unasked for mapIdle were last dropped
	now   func() time.Time      // the clock (tests); nil: time.Now
}

// mapIdle is how long an event's body and encoder are kept unasked: a stadium's are
// some 13 MB, and a box office serves many events over its life, most of them past.
// An event asked for again is encoded whole once more (about 100 ms).
const mapIdle = 10 * time.Minute

// mapBody is one copy of an event's map, encoded.
type mapBody struct {
	version   int64
	at        time.Time
	plain, gz []byte
}

// of returns the body of m, encoding it unless it is the copy encoded last. One
// request at a time encodes an event's map; those that arrive meanwhile for the same
// copy wait for its body rather than encode it again.
func (b *mapBodies) of(m booking.SeatMap) (*mapBody, error) {
	b.mu.Lock()
	now := time.Now()
	if b.now != nil {
		now = b.now()
	}
	b.sweep(now)
	if b.enc == nil {
		b.m, b.enc = map[int64]*mapBody{}, map[int64]*mapEncoder{}
	}
	e := b.enc[m.EventID]
	if e == nil {
		e = &mapEncoder{}
		b.enc[m.EventID] = e
	}
	e.used = now
	cur := b.latest(m)
	b.mu.Unlock()
	if cur != nil {
		return cur, nil
	}

	e.mu.Lock()
	defer e.mu.Unlock()
	b.mu.Lock()
	cur = b.latest(m) // encoded while this request waited
	b.mu.Unlock()
	if cur != nil {
		return cur, nil
	}
	body, err := e.encode(m)
	if err != nil {
		return nil, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if cur := b.m[m.EventID]; cur == nil || !cur.at.After(body.at) {
		b.m[m.EventID] = body
	}
	return body, nil
}

// sweep drops, at most once a minute, the bodies and encoders of events no request
// has asked for in mapIdle. b.mu is held.
func (b *mapBodies) sweep(now time.Time) {
	if now.Sub(b.swept) < time.Minute {
		return
	}
	b.swept = now
	for id, e := range b.enc {
		if now.Sub(e.used) > mapIdle {
			delete(b.enc, id)
			delete(b.m, id)
		}
	}
}

// latest is the body of m if it is the copy encoded last, else nil. b.mu is held.
func (b *mapBodies) latest(m booking.SeatMap) *mapBody {
	if cur := b.m[m.EventID]; cur != nil && cur.version == m.Version && cur.at.Equal(m.At) {
		return cur
	}
	return nil
}

// mapEncoder writes one event's map as encoding/json writes seatMapJSON, byte for
// byte (TestMapEncoderAsEncodingJSON), but keeps each seat's JSON but its status from
// the copy before: in a sale only statuses change, and encoding/json's reflection over
// 50,000 seats each second had been 6 % of the server's CPU in make onsale (p44d). A
// seat whose name, place or price changed is encoded again.
type mapEncoder struct {
	used time.Time // when a request last asked for the map (mapBodies.mu)

	mu       sync.Mutex
	seats    []seatParts
	statuses map[string][]byte // a status, as a JSON string
	size     int               // the last body's length, to size the next
}

// seatParts is a seat's JSON around its status: head ends with `"status":`.
type seatParts struct {
	seat       booking.MapSeat // Status and Rank left out: they are not in the parts
	head, tail []byte
}

func (e *mapEncoder) encode(m booking.SeatMap) (*mapBody, error) {
	if len(e.seats) > len(m.Seats) {
		e.seats = e.seats[:len(m.Seats)]
	}
	plain := make([]byte, 0, e.size+64)
	plain = append(plain, `{"eventId":`...)
	plain = strconv.AppendInt(plain, m.EventID, 10)
	plain = append(plain, `,"seats":[`...)
	for i, st := range m.Seats {
		key := st
		key.Status, key.Rank = "", 0
		if i == len(e.seats) {
			e.seats = append(e.seats, seatParts{})
		}
		p := &e.seats[i]
		if p.head == nil || p.seat != key {
			var err error
			if *p, err = partsOf(key); err != nil {
				return nil, err
			}
		}
		status, err := e.status(st.Status)
		if err != nil {
			return nil, err
		}
		if i > 0 {
			plain = append(plain, ',')
		}
		plain = append(plain, p.head...)
		plain = append(plain, status...)
		plain = append(plain, p.tail...)
	}
	plain = append(plain, `],"gaTiers":`...)
	tiers := make([]gaTierJSON, len(m.GATiers))
	for i, t := range m.GATiers {
		tiers[i] = gaTierJSON{ID: t.ID, Name: t.Name, PriceCents: t.PriceCents, Remaining: t.Remaining}
	}
	tj, err := json.Marshal(tiers)
	if err != nil {
		return nil, err
	}
	plain = append(plain, tj...)
	plain = append(plain, "}\n"...)
	e.size = len(plain)

	var gz bytes.Buffer
	gz.Grow(len(plain) / 6)
	w, err := gzip.NewWriterLevel(&gz, gzip.BestSpeed)
	if err != nil {
		return nil, err
	}
	if _, err := w.Write(plain); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return &mapBody{version: m.Version, at: m.At, plain: plain, gz: gz.Bytes()}, nil
}

// statusMark is where a seat's status goes in its JSON, written as an empty string:
// no encoded string holds an unescaped quote, so its first place is the key's.
var statusMark = []byte(`"status":""`)

// partsOf is the seat's JSON (encoding/json's, status empty) cut around its status.
func partsOf(st booking.MapSeat) (seatParts, error) {
	b, err := json.Marshal(mapSeatJSON{ID: st.ID, Section: st.Section, Row: st.Row, Number: st.Number,
		PriceCents: st.PriceCents, X: st.X, Y: st.Y, Accessible: st.Accessible})
	if err != nil {
		return seatParts{}, err
	}
	at := bytes.Index(b, statusMark)
	if at < 0 {
		return seatParts{}, fmt.Errorf("seat %d: no status in its JSON %s", st.ID, b)
	}
	cut := at + len(`"status":`)
	return seatParts{seat: st, head: b[:cut:cut], tail: b[at+len(statusMark):]}, nil
}

func (e *mapEncoder) status(s string) ([]byte, error) {
	if b, ok := e.statuses[s]; ok {
		return b, nil
	}
	b, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	if e.statuses == nil {
		e.statuses = map[string][]byte{}
	}
	e.statuses[s] = b
	return b, nil
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
