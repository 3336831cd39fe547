package web_test

import (
	"strings"
	"testing"
	"time"

	"boxoffice/internal/live"
	"boxoffice/web"
)

// TestStreamRepairsLostChange: a seat held by a commit whose announcement never went
// out (written in SQL, as an instance killed between its commit and its publish would
// leave it) reaches a viewer's stream within a few seconds through the hub's repair.
// The control: with the repair off, the same wait brings the viewer nothing.
func TestStreamRepairsLostChange(t *testing.T) {
	t.Parallel()
	for _, repair := range []bool{true, false} {
		name := "repair off"
		if repair {
			name = "repair on"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			sa := newStreamAppWith(t, web.StreamOptions{}, func(a *testApp, o *live.HubOptions) {
				if repair {
					o.Repair, o.RepairEvery = a.Booking.Maps.SeatMapDrift, 200*time.Millisecond
				}
			})
			m, err := sa.Booking.Maps.SeatMap(t.Context(), sa.EventID)
			if err != nil {
				t.Fatal(err)
			}
			s, _ := sa.open(t, "?v="+itoa(m.Version), nil)
			sa.waitSynced(t)
			x := m.Seats[0].ID
			if _, err := sa.Pool.Exec(t.Context(), `UPDATE seats SET held_by = 1, hold_expires_at = now() + interval '10 minutes' WHERE id = $1`, x); err != nil {
				t.Fatal(err)
			}
			ev, ok := s.seatEvent(t, x, 5*time.Second)
			if repair && (!ok || !strings.Contains(ev.data, "held")) {
				t.Fatalf("repair on: got %+v (arrived %v), want seat %d held within 5 s", ev, ok, x)
			}
			if !repair && ok {
				t.Fatalf("repair off: got %+v, want nothing about seat %d (the announcement was lost)", ev, x)
			}
		})
	}
}

// seatEvent waits up to wait for a seats event naming the seat; ok is false if none came.
func (s *stream) seatEvent(t *testing.T, seat int64, wait time.Duration) (sseEvent, bool) {
	t.Helper()
	deadline := time.After(wait)
	for {
		select {
		case ev, open := <-s.events:
			if !open {
				t.Fatal("stream ended, want it open")
			}
			if ev.event == "seats" && strings.Contains(ev.data, `id="seat-`+itoa(seat)+`"`) {
				return ev, true
			}
		case <-deadline:
			return sseEvent{}, false
		}
	}
}
