package checkin

import (
	"context"
	"sync/atomic"
	"testing"
)

// BenchmarkCheckIn checks distinct tickets in from parallel scanners (GOMAXPROCS
// goroutines, -cpu to change): each check-in is its conditional UPDATE, the audit entry
// and the log row in one transaction. The tickets are written straight into the order
// of one sale, so that the setup costs no sales.
//
//	go test -run '^$' -bench CheckIn -cpu 8 ./internal/checkin/
func BenchmarkCheckIn(b *testing.B) {
	f := newFixture(b)
	_, orderID := f.sell(b, f.event)
	rows, err := f.pool.Query(context.Background(), `
		INSERT INTO tickets (event_id, order_id, ga_tier_id, code)
		SELECT $1, $2, 0, 'bench' || g FROM generate_series(1, $3::int) g
		RETURNING code`, f.event, orderID, b.N)
	if err != nil {
		b.Fatal(err)
	}
	var codes []string
	for rows.Next() {
		var c string
		if err := rows.Scan(&c); err != nil {
			b.Fatal(err)
		}
		codes = append(codes, c)
	}
	rows.Close()
	var next atomic.Int64
	var notValid atomic.Int64
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			code := codes[next.Add(1)-1]
			a, err := f.door.CheckIn(context.Background(), Scan{EventID: f.event, Gate: "Bench", Code: code})
			if err != nil {
				b.Error(err)
				return
			}
			if a.Result != Valid {
				notValid.Add(1)
			}
		}
	})
	b.StopTimer()
	if n := notValid.Load(); n > 0 {
		b.Errorf("%d of %d first scans not valid", n, b.N)
	}
}
