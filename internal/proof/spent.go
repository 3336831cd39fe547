package proof

import (
	"encoding/hex"
	"sync"
	"time"
)

// maxLocal bounds the solutions one instance remembers itself, about 60 bytes each:
// a few minutes of an onsale's joins on one instance, at most ~15 MB.
const maxLocal = 250_000

// localSpent is the instance's own memory of spent solutions, beside Redis's. A
// solution this instance accepted is refused here again whatever Redis says, and while
// Redis is away this memory alone decides: a solution then counts once per instance,
// and new buyers are not turned away for want of Redis, which only mirrors.
type localSpent struct {
	mu   sync.Mutex
	seen map[[32]byte]int64 // challenge → unix seconds until which it is remembered
}

// spend records challenge (hex SHA-256) as spent until until. It reports whether it
// had been spent here before, and whether it is remembered now (false only when the
// memory is full of unexpired solutions).
func (l *localSpent) spend(challenge string, until, now time.Time) (before, kept bool) {
	var k [32]byte
	if n, err := hex.Decode(k[:], []byte(challenge)); err != nil || n != len(k) {
		return false, false // check accepts only hex SHA-256 challenges
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.seen == nil {
		l.seen = map[[32]byte]int64{}
	}
	if exp, ok := l.seen[k]; ok && exp > now.Unix() {
		return true, true
	}
	if len(l.seen) >= maxLocal {
		for c, exp := range l.seen {
			if exp <= now.Unix() {
				delete(l.seen, c)
			}
		}
		if len(l.seen) >= maxLocal {
			return false, false
		}
	}
	l.seen[k] = until.Unix()
	return false, true
}
