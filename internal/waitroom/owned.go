package waitroom

import (
	"encoding/binary"
	"strconv"

	"boxoffice/internal/keyring"
)

// Places owned by a buyer, for onsales that give one place per confirmed email: every
// session that confirmed one address is one buyer, and every place that buyer takes
// has the same tiebreak, drawn from the event and the buyer by the room's key. More
// places buy no more chances in the pre-queue's draw (they all stand where the buyer
// does), a place taken later stands no earlier than the buyer's first, and a place is
// worth nothing to another buyer (Owns). Claim's issuedAfter keeps a buyer to one
// admission a place taken before its last claim: another round starts at the end of
// the line, as a new join does in the sorted-set room.

const ownedDomain = "boxoffice/waitroom/owned/v1\x00"

// drawOf is buyer's tiebreak on the event by secret, as a place token carries it.
func drawOf(secret []byte, eventID int64, buyer string) float64 {
	sum := keyring.MAC(secret, ownedDomain, []byte(strconv.FormatInt(eventID, 10)+"\x00"+buyer))
	return float64(binary.BigEndian.Uint32(sum)) / tiebreakScale
}

// ArriveAs is Arrive for a buyer's own place: its tiebreak is the buyer's draw.
func (r *Room) ArriveAs(ev Event, b Board, buyer string) (Place, string) {
	p, tok := r.Issue(ev, b, buyer)
	r.Count(p)
	return p, tok
}

// Owns reports whether place p was given to buyer (ArriveAs) under any configured key.
func (r *Room) Owns(p Place, buyer string) bool {
	for _, secret := range r.verifiers {
		if drawOf(secret, p.EventID, buyer) == p.Tiebreak {
			return true
		}
	}
	return false
}
