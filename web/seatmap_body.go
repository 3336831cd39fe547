package web

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
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
// Echo's middleware's level 5 the compression alone would be 7 % of the server's CPU
// during make onsale's sale, for one map a second.
//
// Only the seats' statuses change during a sale, so the map also comes in two parts:
// the layout (every seat but its status, with an id that changes when a seat does),
// which a client reads once and a cache may keep for good under its id, and the
// statuses, a letter a seat in the layout's order (about 1 % of the whole map), which
// is what a client reads again every second.
type mapBodies struct {
	mu    sync.Mutex
	m     map[bodyKey]*mapBody  // the body of each kind of an event's latest copy
	enc   map[int64]*mapEncoder // event id → its encoder
	swept time.Time             // when events unasked for mapIdle were last dropped
	now   func() time.Time      // the clock (tests); nil: time.Now
}

// bodyKind is which answer a body is: the whole map, its statuses or its layout.
type bodyKind uint8

const (
	wholeMap bodyKind = iota
	mapStatuses
	mapLayout
)

type bodyKey struct {
	event int64
	kind  bodyKind
}

// mapIdle is how long an event's bodies and encoder are kept unasked: a stadium's are
// some 20 MB, and a box office serves many events over its life, most of them past.
// An event asked for again is encoded whole once more (about 100 ms).
const mapIdle = 10 * time.Minute

// mapBody is one copy of an event's map, its statuses or its layout, encoded.
type mapBody struct {
	version   int64
	at        time.Time
	plain, gz []byte
	layout    string // the layout's id (statuses and layout)
}

// of returns the body of m, encoding it unless it is the copy encoded last.
func (b *mapBodies) of(m booking.SeatMap) (*mapBody, error) { return b.body(m, wholeMap) }

// body returns the body of the kind of m, encoding it unless it is the copy encoded
// last. One request at a time encodes an event's map; those that arrive meanwhile for
// the same copy wait for its body rather than encode it again.
func (b *mapBodies) body(m booking.SeatMap, kind bodyKind) (*mapBody, error) {
	key := bodyKey{m.EventID, kind}
	b.mu.Lock()
	now := time.Now()
	if b.now != nil {
		now = b.now()
	}
	b.sweep(now)
	if b.enc == nil {
		b.m, b.enc = map[bodyKey]*mapBody{}, map[int64]*mapEncoder{}
	}
	e := b.enc[m.EventID]
	if e == nil {
		e = &mapEncoder{}
		b.enc[m.EventID] = e
	}
	e.used = now
	cur := b.latest(key, m)
	b.mu.Unlock()
	if cur != nil {
		return cur, nil
	}

	e.mu.Lock()
	defer e.mu.Unlock()
	b.mu.Lock()
	cur = b.latest(key, m) // encoded while this request waited
	b.mu.Unlock()
	if cur != nil {
		return cur, nil
	}
	var body *mapBody
	var err error
	switch kind {
	case wholeMap:
		body, err = e.encode(m)
	case mapStatuses:
		body, err = e.encodeStatuses(m)
	default:
		var l *mapBody
		if l, err = e.encodeLayout(m); err == nil {
			copied := *l
			body = &copied
		}
	}
	if err != nil {
		return nil, err
	}
	body.version, body.at = m.Version, m.At
	b.mu.Lock()
	defer b.mu.Unlock()
	if cur := b.m[key]; cur == nil || !cur.at.After(body.at) {
		b.m[key] = body
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
			for _, kind := range []bodyKind{wholeMap, mapStatuses, mapLayout} {
				delete(b.m, bodyKey{id, kind})
			}
		}
	}
}

// latest is the body of the kind of m if it is of the copy encoded last, else nil.
// b.mu is held.
func (b *mapBodies) latest(key bodyKey, m booking.SeatMap) *mapBody {
	if cur := b.m[key]; cur != nil && cur.version == m.Version && cur.at.Equal(m.At) {
		return cur
	}
	return nil
}

// mapEncoder writes one event's map as encoding/json writes seatMapJSON, byte for
// byte (TestMapEncoderAsEncodingJSON), but keeps each seat's JSON but its status from
// the copy before: in a sale only statuses change, and encoding/json's reflection over
// 50,000 seats each second would be 6 % of the server's CPU in make onsale. A
// seat whose name, place or price changed is encoded again, and the layout with it.
type mapEncoder struct {
	used time.Time // when a request last asked for the map (mapBodies.mu)

	mu       sync.Mutex
	seats    []seatParts
	statuses map[string][]byte // a status, as a JSON string
	size     int               // the last body's length, to size the next
	layout   *mapBody          // the layout of seats; nil when a seat changed since
}

// seatParts is a seat's JSON around its status: head ends with `,"status":`.
type seatParts struct {
	seat       booking.MapSeat // Status and Rank left out: they are not in the parts
	head, tail []byte
}

// sync makes e.seats the parts of m's seats.
func (e *mapEncoder) sync(m booking.SeatMap) error {
	if len(e.seats) != len(m.Seats) {
		e.layout = nil
	}
	if len(e.seats) > len(m.Seats) {
		e.seats = e.seats[:len(m.Seats)]
	}
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
				return err
			}
			e.layout = nil
		}
	}
	return nil
}

// encode writes the whole map of m.
func (e *mapEncoder) encode(m booking.SeatMap) (*mapBody, error) {
	if err := e.sync(m); err != nil {
		return nil, err
	}
	plain := make([]byte, 0, e.size+64)
	plain = append(plain, `{"eventId":`...)
	plain = strconv.AppendInt(plain, m.EventID, 10)
	plain = append(plain, `,"seats":[`...)
	for i, st := range m.Seats {
		status, err := e.status(st.Status)
		if err != nil {
			return nil, err
		}
		if i > 0 {
			plain = append(plain, ',')
		}
		p := &e.seats[i]
		plain = append(plain, p.head...)
		plain = append(plain, status...)
		plain = append(plain, p.tail...)
	}
	plain, err := appendTiers(append(plain, `],"gaTiers":`...), m.GATiers)
	if err != nil {
		return nil, err
	}
	plain = append(plain, "}\n"...)
	e.size = len(plain)
	return zipped(plain)
}

// encodeStatuses writes m's statuses, a letter a seat in the layout's order, with the
// layout's id and the standing tiers.
func (e *mapEncoder) encodeStatuses(m booking.SeatMap) (*mapBody, error) {
	l, err := e.encodeLayout(m)
	if err != nil {
		return nil, err
	}
	plain := make([]byte, 0, len(m.Seats)+200)
	plain = append(plain, `{"eventId":`...)
	plain = strconv.AppendInt(plain, m.EventID, 10)
	plain = append(plain, `,"layout":"`...)
	plain = append(plain, l.layout...)
	plain = append(plain, `","statuses":"`...)
	for _, st := range m.Seats {
		switch st.Status {
		case booking.SeatAvailable:
			plain = append(plain, 'a')
		case booking.SeatHeld:
			plain = append(plain, 'h')
		case booking.SeatSold:
			plain = append(plain, 's')
		default:
			return nil, fmt.Errorf("seat %d: status %q has no letter", st.ID, st.Status)
		}
	}
	if plain, err = appendTiers(append(plain, `","gaTiers":`...), m.GATiers); err != nil {
		return nil, err
	}
	body, err := zipped(append(plain, "}\n"...))
	if err != nil {
		return nil, err
	}
	body.layout = l.layout
	return body, nil
}

// encodeLayout writes the layout of m: each seat's JSON without its status, and the
// layout's id, a hash of them. Kept until a seat changes.
func (e *mapEncoder) encodeLayout(m booking.SeatMap) (*mapBody, error) {
	if err := e.sync(m); err != nil {
		return nil, err
	}
	if e.layout != nil {
		return e.layout, nil
	}
	seats := make([]byte, 0, e.size+64)
	seats = append(seats, '[')
	for i, p := range e.seats {
		if i > 0 {
			seats = append(seats, ',')
		}
		seats = append(seats, p.head[:len(p.head)-len(statusKey)]...)
		seats = append(seats, p.tail...)
	}
	seats = append(seats, ']')
	sum := sha256.Sum256(seats)
	id := hex.EncodeToString(sum[:8])
	plain := make([]byte, 0, len(seats)+64)
	plain = append(plain, `{"eventId":`...)
	plain = strconv.AppendInt(plain, m.EventID, 10)
	plain = append(plain, `,"layout":"`...)
	plain = append(plain, id...)
	plain = append(plain, `","seats":`...)
	plain = append(plain, seats...)
	body, err := zipped(append(plain, "}\n"...))
	if err != nil {
		return nil, err
	}
	body.layout = id
	e.layout = body
	return body, nil
}

// appendTiers appends the standing tiers as JSON.
func appendTiers(b []byte, ga []booking.GATier) ([]byte, error) {
	tiers := make([]gaTierJSON, len(ga))
	for i, t := range ga {
		tiers[i] = gaTierJSON{ID: t.ID, Name: t.Name, PriceCents: t.PriceCents, Remaining: t.Remaining}
	}
	tj, err := json.Marshal(tiers)
	return append(b, tj...), err
}

// zipped is a body of plain and plain gzipped at BestSpeed.
func zipped(plain []byte) (*mapBody, error) {
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
	return &mapBody{plain: plain, gz: gz.Bytes()}, nil
}

// statusMark is where a seat's status goes in its JSON, written as an empty string:
// no encoded string holds an unescaped quote, so its first place is the key's.
var statusMark = []byte(`,"status":""`)

// statusKey is the end of a seat's head.
const statusKey = `,"status":`

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
	cut := at + len(statusKey)
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
