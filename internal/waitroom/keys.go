package waitroom

import "strconv"

// An event's keys share the hash tag {event:ID}, so Redis Cluster keeps them on one
// slot and one script may touch them all. Redis hashes the first {…} of a key, so the
// prefix must not contain a '{'.
func eventTag(eventID int64) string { return "{event:" + strconv.FormatInt(eventID, 10) + "}" }

// eventKeys are the KEYS of every per-event script, in this order:
//
//	queue     sorted set: waiting visitor → place (pre-queue: random in [0,1); later: 1, 2, 3…)
//	seen      sorted set: waiting visitor → when the page last checked in (Redis ms)
//	admitted  sorted set: admitted visitor → when the admission ends (Redis ms)
//	state     hash: epoch, token bucket, FIFO sequence, stock, measured rate, admitter fence
//	rate      hash: second (Redis clock) → admissions in it, the last few seconds only
//	ended     sorted set: visitor whose admission ended early (bought, released) → the
//	          end that admission had (Redis ms); its tokens, which end no later, are refused
//	fresh     sorted set: admitted visitor who has held nothing yet → when the admission
//	          lapses unless a hold comes first (Redis ms)
//	lapsed    sorted set: visitor whose admission lapsed, nothing held → the end that
//	          admission had (Redis ms); its tokens are refused, as ended's are
//	back      hash: second (Redis clock) → admissions that came back in it (lapsed, left,
//	          ran out), the last minute only
//	count     hash: arrival group → arrivals counted in it (place tokens), and "total"
//	groups    sorted set: the arrival groups with a count, scored by group
//	claims    hash: place nonce → the visitor who claimed it (one claim per place), and
//	          "b:" buyer → when the buyer last claimed one of its own places (Redis ms)
//	grants    hash: second (Redis clock) → places the cursor passed in it, the claim window only
//	claimed   hash: second (Redis clock) → places claimed in it, the claim window only
func eventKeys(prefix string, eventID int64) []string {
	p := prefix + eventTag(eventID) + ":wr:"
	return []string{p + "queue", p + "seen", p + "admitted", p + "state", p + "rate", p + "ended",
		p + "fresh", p + "lapsed", p + "back",
		p + "count", p + "groups", p + "claims", p + "grants", p + "claimed"}
}

// Indexes into eventKeys.
const (
	keyQueue = iota
	keySeen
	keyAdmitted
	keyState
	keyRate
	keyEnded
	keyFresh
	keyLapsed
	keyBack
	keyCount
	keyGroups
	keyClaims
	keyGrants
	keyClaimed
)

// leaseKey names the admitter's lease: one for all events, since one instance admits
// for all of them. It is not hash-tagged; nothing touches it together with event keys.
func leaseKey(prefix string) string { return prefix + "wr:lease" }
