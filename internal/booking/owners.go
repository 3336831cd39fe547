package booking

import "sync"

// orderOwners remembers whose each order is and of which event: facts fixed when the
// order is made. The check in front of every pay call (OrderEvent) answers from it
// without a connection: at an onsale a read per pay call would take one of the pool's
// connections for that alone, and the connections are what the sale's steps wait for
// (docs/BENCHMARKS.md). Checkout fills it with the order it made or found;
// OrderEvent with what it read. Only facts are kept, never a verdict: the pay call's
// own claim locks the order and checks its buyer again.
//
// It keeps two generations of at most max orders each: when the newer is full it
// becomes the older and the older is dropped, so an order checked out a moment ago
// is still known after the turn. An order forgotten costs one read.
type orderOwners struct {
	mu         sync.Mutex
	max        int
	cur, older map[int64]orderOwner
}

type orderOwner struct {
	event int64
	buyer string
}

// orderOwnersMax is the size of a generation: an onsale's orders of several minutes
// (50,000 seats sold 1 to 8 at a time), at some 60 bytes an order.
const orderOwnersMax = 1 << 16

func (m *orderOwners) get(order int64) (orderOwner, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if o, ok := m.cur[order]; ok {
		return o, true
	}
	o, ok := m.older[order]
	return o, ok
}

func (m *orderOwners) put(order int64, o orderOwner) {
	m.mu.Lock()
	defer m.mu.Unlock()
	limit := m.max
	if limit <= 0 {
		limit = orderOwnersMax
	}
	if m.cur == nil || len(m.cur) >= limit {
		m.older, m.cur = m.cur, make(map[int64]orderOwner)
	}
	m.cur[order] = o
}
