package waitroom

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"time"

	"boxoffice/internal/keyring"
)

// The front door: a place in the queue kept by the visitor, not by the server. An
// arrival gets a signed place token (its cookie) naming the event, its arrival group,
// a random tiebreak and a nonce; the server only counts arrivals per group, in memory,
// and adds the counts to Redis in one pipeline a second (arrivals.go). The queue's
// order is (group, tiebreak): group 0 is the pre-queue, every arrival before the draw,
// whose random tiebreaks shuffle it; group g ≥ 1 is the g-th GroupSpan after the draw,
// so later arrivals go first in, first out by group, in random order within one. The
// admitter moves a cursor through the counted groups at the admission rate
// (front.go); a waiter whose place the cursor has passed claims its admission (Claim),
// and only then does the origin create a session for it.

// Place is what a place token says.
type Place struct {
	EventID  int64
	Group    uint64  // 0: the pre-queue; g ≥ 1: arrived in the g-th span after the draw
	Tiebreak float64 // uniform in [0, 1): the order within the group
	Nonce    uint64  // one claim per place (Claim)
	IssuedAt time.Time
	// Number is how many arrivals had been counted when the place was issued, every
	// instance's flushed counts that the issuing one knew of and its own not yet
	// flushed (counter.counted): the board's Passed subtracted from it is about the
	// people ahead (after the draw).
	Number int64
	// Epoch is the room's epoch the place was counted under ("" unknown): when the
	// board shows another one, Redis lost the counts, and the place is counted again
	// (Recount).
	Epoch string
	KeyID string
}

// A place token is base64url (unpadded) of
//
//	payload = version (1 byte) | event (uvarint) | group (uvarint) | tiebreak (4 bytes)
//	          | nonce (8 bytes) | issued, unix ms (uvarint) | number (uvarint)
//	          | epoch length (1 byte) | epoch | key id length (1 byte) | key id
//	mac     = HMAC-SHA256(secret, placeDomain | payload), 32 bytes
//
// It is not bound to a session (there is none before admission): whoever shows it
// holds the place, and the nonce lets it be claimed once.
const (
	placeVersion = 2
	placeDomain  = "boxoffice/waitroom/place/v1\x00"
)

var placeEncoding = base64.RawURLEncoding

// tiebreakScale turns the token's 32-bit tiebreak into a fraction of a group.
const tiebreakScale = 1 << 32

// placeMACs are the place tokens' MACs under each key, by its id.
func placeMACs(verifiers map[string][]byte) map[string]*keyring.MACs {
	out := make(map[string]*keyring.MACs, len(verifiers))
	for id, secret := range verifiers {
		out[id] = keyring.NewMACs(secret, placeDomain)
	}
	return out
}

func (r *Room) signPlace(p Place) string {
	k := r.keys[0]
	b := make([]byte, 0, 64+len(p.Epoch)+len(k.ID)+keyring.Size)
	b = append(b, placeVersion)
	b = binary.AppendUvarint(b, uint64(p.EventID))
	b = binary.AppendUvarint(b, p.Group)
	b = binary.BigEndian.AppendUint32(b, uint32(p.Tiebreak*tiebreakScale))
	b = binary.BigEndian.AppendUint64(b, p.Nonce)
	b = binary.AppendUvarint(b, uint64(p.IssuedAt.UnixMilli()))
	b = binary.AppendUvarint(b, uint64(max(p.Number, 0)))
	b = append(b, byte(len(p.Epoch)))
	b = append(b, p.Epoch...)
	b = append(b, byte(len(k.ID)))
	b = append(b, k.ID...)
	b = r.placeMACs[k.ID].Append(b, b)
	return placeEncoding.EncodeToString(b)
}

// VerifyPlace checks a place token by signature alone and that it is for the event.
// Every refusal wraps ErrInvalidToken with its reason.
func (r *Room) VerifyPlace(token string, eventID int64) (Place, error) {
	refuse := func(format string, a ...any) (Place, error) {
		return Place{}, fmt.Errorf("%w: place: "+format, append([]any{ErrInvalidToken}, a...)...)
	}
	raw, err := placeEncoding.DecodeString(token)
	if err != nil || len(raw) < 1+keyring.Size || raw[0] != placeVersion {
		return refuse("malformed")
	}
	payload, sum := raw[:len(raw)-keyring.Size], raw[len(raw)-keyring.Size:]
	d := decoder{b: payload[1:]}
	p := Place{EventID: int64(d.uvarint()), Group: d.uvarint()}
	p.Tiebreak = float64(d.fixed(4)) / tiebreakScale
	p.Nonce = d.fixed(8)
	p.IssuedAt = time.UnixMilli(int64(d.uvarint()))
	p.Number = int64(d.uvarint())
	p.Epoch = d.str()
	p.KeyID = d.str()
	if d.bad || len(d.b) != 0 {
		return refuse("malformed")
	}
	macs, ok := r.placeMACs[p.KeyID]
	if !ok {
		return refuse("signed by key %q, which is not configured", p.KeyID)
	}
	if !macs.Equal(sum, payload) {
		return refuse("bad signature")
	}
	if p.EventID != eventID {
		return refuse("issued for event %d, not %d", p.EventID, eventID)
	}
	return p, nil
}

// decoder reads a token's fields; bad says one was cut short.
type decoder struct {
	b   []byte
	bad bool
}

func (d *decoder) uvarint() uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.bad = true
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) fixed(n int) uint64 {
	if len(d.b) < n {
		d.bad = true
		return 0
	}
	var v uint64
	for _, c := range d.b[:n] {
		v = v<<8 | uint64(c)
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) str() string {
	if len(d.b) < 1 || len(d.b) < 1+int(d.b[0]) {
		d.bad = true
		return ""
	}
	s := string(d.b[1 : 1+d.b[0]])
	d.b = d.b[1+int(d.b[0]):]
	return s
}

// groupOf is the arrival group of a visitor arriving at now, by this server's clock:
// 0 before the draw, else 1 + the whole spans since it.
func (r *Room) groupOf(drawAt, now time.Time) uint64 {
	if now.Before(drawAt) {
		return 0
	}
	return 1 + uint64(now.Sub(drawAt)/r.opt.GroupSpan)
}

// Arrive gives a new arrival its place, by the board b the caller last read (the
// zero Board when none: then the onsale is the draw and the place has no number):
// no Redis and no database, one count in this instance's memory (arrivals.go). It
// answers the place and its signed token.
func (r *Room) Arrive(ev Event, b Board) (Place, string) {
	p, tok := r.Issue(ev, b, "")
	r.Count(p)
	return p, tok
}

// Issue is Arrive (ArriveAs with a buyer) without the count: a place for a caller
// that has one more check to pass before the place stands, which it then counts
// (Count) or drops.
func (r *Room) Issue(ev Event, b Board, buyer string) (Place, string) {
	if buyer != "" {
		return r.issue(ev, b, drawOf(r.keys[0].Secret, ev.ID, buyer))
	}
	return r.issue(ev, b, r.place())
}

// Count counts an issued place in its group, in this instance's memory.
func (r *Room) Count(p Place) { r.counter.add(p.EventID, p.Group) }

// issue makes a place with the given tiebreak and signs it.
func (r *Room) issue(ev Event, b Board, tiebreak float64) (Place, string) {
	drawAt := ev.OnsaleAt
	if b.DrawAt.After(drawAt) {
		drawAt = b.DrawAt
	}
	var nonce [8]byte
	_, _ = rand.Read(nonce[:])
	p := Place{
		EventID: ev.ID, Group: r.groupOf(drawAt, time.Now()), Tiebreak: tiebreak,
		Nonce: binary.BigEndian.Uint64(nonce[:]), IssuedAt: time.Now().Truncate(time.Millisecond),
		Number: r.counter.counted(ev.ID, b.Counted), Epoch: b.Epoch, KeyID: r.keys[0].ID,
	}
	// The tiebreak is carried in 32 bits: keep the place the token will say.
	p.Tiebreak = float64(uint32(p.Tiebreak*tiebreakScale)) / tiebreakScale
	return p, r.signPlace(p)
}

// Recount counts a place again under the board's epoch after Redis lost the counts
// (the board's Epoch is not the place's), keeping its group and tiebreak, and answers
// it re-signed; a place counted under the board's epoch is answered as it is.
//
// A place issued before its instance knew the epoch (Epoch "") was counted under the
// epoch of its flush: it takes the board's without being counted again.
func (r *Room) Recount(p Place, token string, b Board) (Place, string) {
	if b.Epoch == "" || p.Epoch == b.Epoch {
		return p, token
	}
	if p.Epoch != "" {
		r.counter.add(p.EventID, p.Group)
	}
	p.Epoch, p.KeyID = b.Epoch, r.keys[0].ID
	return p, r.signPlace(p)
}

// Passed says whether the board's cursor has passed the place: its turn has come.
func (p Place) Passed(b Board) bool {
	return p.Group < b.CursorGroup || (p.Group == b.CursorGroup && p.Tiebreak < b.CursorFrac)
}

// Ahead is about how many counted arrivals are ahead of the place on board b: in the
// pre-queue its share of the group beyond the cursor (the tiebreaks are uniform), after
// it its number less the arrivals the cursor has passed. 0 once passed.
func (p Place) Ahead(b Board) int {
	switch {
	case p.Passed(b):
		return 0
	case p.Group == 0:
		from := 0.0
		if b.CursorGroup == 0 {
			from = b.CursorFrac
		}
		return int(float64(b.PreCount) * max(0, p.Tiebreak-from))
	}
	return int(max(0, float64(p.Number)-b.Passed))
}

// PollAfter paces the door page's reads of board b, as pollAfter paces the queue
// page's: every second while the turn (or, in the pre-queue, the draw) may come within
// a few, less often the further back, up to MaxPoll; MaxPoll while the board has no
// figure (paused, all held) or the event is sold out. The shortest wait (Wait's lo,
// the notice left out) over four is how far a turn can be from a read, so a place
// learns its turn within about a second of it, however far back it stood; a crowd far
// back reads the board a fifth as often as every second (each read is the CDN's).
func (p Place) PollAfter(b Board) time.Duration {
	var d time.Duration
	switch lo, _, _ := p.Wait(b); {
	case p.Passed(b):
		d = MinPoll
	case b.SoldOut:
		d = MaxPoll
	case b.PreQueue && p.Group == 0:
		d = b.DrawAt.Sub(b.At)
	case lo > 0:
		d = (lo - b.Notice) / 4
	default:
		d = MaxPoll
	}
	return min(max(d, MinPoll), MaxPoll)
}

// Wait is the place's wait on board b, within bounds, as its page works it out from the
// board (static/js/door.js does the same sum): its position's worth of the board's wait
// a place, counted from when the cursor opens (Board.OpensAt: the draw's Settle, which
// a place of the pre-queue waits out first) and no sooner than the cursor may enter the
// place's group, and the notice of the turn. All zero when the board has no honest
// figure (PerPlace zero: paused, all held) or the place has passed.
func (p Place) Wait(b Board) (lo, est, hi time.Duration) {
	if b.PerPlace <= 0 || p.Passed(b) {
		return 0, 0, 0
	}
	pos := time.Duration(p.Ahead(b) + 1)
	start := max(b.OpensAt.Sub(b.At), 0)
	group := max(b.OpensAt.Add(time.Duration(p.Group)*b.GroupSpan).Sub(b.At), 0) - start
	wait := func(per time.Duration) time.Duration { return start + max(pos*per, group) + b.Notice }
	return wait(b.PerPlaceMin), wait(b.PerPlace), wait(b.PerPlaceMax)
}
