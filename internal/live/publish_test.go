package live

import (
	"encoding/json"
	"io"
	"log/slog"
	"slices"
	"testing"
	"time"

	"boxoffice/internal/dbtest"
)

// TestPublisherAnnouncesInOrder: changes reach subscribers of their event only, with
// versions that count up, and Close sends what was queued.
func TestPublisherAnnouncesInOrder(t *testing.T) {
	t.Parallel()
	rdb, prefix := dbtest.Redis(t)
	sub := Subscribe(t.Context(), rdb, prefix, 7)
	defer sub.Close()
	if _, err := sub.Receive(t.Context()); err != nil { // the subscription confirmation
		t.Fatal(err)
	}
	other := Subscribe(t.Context(), rdb, prefix, 8)
	defer other.Close()
	if _, err := other.Receive(t.Context()); err != nil {
		t.Fatal(err)
	}

	p := NewPublisher(rdb, prefix, slog.New(slog.NewTextHandler(io.Discard, nil)))
	p.SeatsChanged(t.Context(), 7, []int64{1, 2})
	p.SeatsChanged(t.Context(), 7, []int64{3})
	p.Close()
	p.SeatsChanged(t.Context(), 7, []int64{4}) // after Close: dropped, no panic

	var seats []int64
	last := int64(0)
	deadline := time.After(5 * time.Second)
	for len(seats) < 3 {
		select {
		case m := <-sub.Channel():
			var c Change
			if err := json.Unmarshal([]byte(m.Payload), &c); err != nil {
				t.Fatalf("payload %q: %v", m.Payload, err)
			}
			if c.Version <= last {
				t.Errorf("version %d after %d, want increasing", c.Version, last)
			}
			last = c.Version
			seats = append(seats, c.SeatIDs...)
		case <-deadline:
			t.Fatalf("got seats %v, want [1 2 3]", seats)
		}
	}
	if !slices.Equal(seats, []int64{1, 2, 3}) {
		t.Errorf("got seats %v, want [1 2 3]", seats)
	}
	select {
	case m := <-other.Channel():
		t.Errorf("event 8 heard %q, want nothing", m.Payload)
	default:
	}
}
