package booking

import (
	"errors"
	"testing"
	"time"

	"boxoffice/internal/demo"
)

// TestControl: the control room's counts follow a hold and a sale; a pause reaches
// the admitter's list of events and a resume takes it back; a rate outside the bounds
// is refused and changes nothing.
func TestControl(t *testing.T) {
	t.Parallel()
	f := newFixture(t, smallSpec([]demo.Section{oneRow("A", 10, 2500)}, demo.GATier{Name: "Floor", PriceCents: 1000, Capacity: 20, Stripes: 2}), Config{})
	ctx := t.Context()
	seats := f.rowSeats(t, "A", "A")
	sold := f.hold(t, "ann", seats[0], seats[1])
	f.pay(t, f.checkout(t, sold, "ann"), "evt-control")
	f.hold(t, "bob", seats[2])
	if _, err := f.holdGA(t, "cat", 3); err != nil {
		t.Fatal(err)
	}
	c, err := f.svc.Desk.Control(ctx, f.event)
	if err != nil {
		t.Fatal(err)
	}
	want := Control{Seats: 10, SeatsSold: 2, SeatsHeld: 1, GACapacity: 20, GAHeld: 3, LiveHolds: 2,
		OrdersConfirmed: 1, RevenueCents: 5000, TicketsLastMinute: 2, QueueSlots: c.QueueSlots, QueueRate: c.QueueRate,
		QueueIdle: 3 * time.Minute}
	if c != want {
		t.Errorf("control counts:\n got %+v\nwant %+v", c, want)
	}
	byMinute, err := f.svc.Desk.TicketsByMinute(ctx, f.event, time.Now().Add(-time.Hour))
	if err != nil || len(byMinute) != 1 || byMinute[0].Tickets != 2 {
		t.Errorf("tickets by minute: %+v, %v; want one minute of 2", byMinute, err)
	}

	if _, err := f.pool.Exec(ctx, `UPDATE events SET queue_enabled = true WHERE id = $1`, f.event); err != nil {
		t.Fatal(err)
	}
	queued := func() (paused, found bool) {
		evs, err := f.svc.Buyer.QueuedEvents(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range evs {
			if e.ID == f.event {
				return e.QueuePaused, true
			}
		}
		return false, false
	}
	if p, ok := queued(); !ok || p {
		t.Fatalf("before the pause: paused=%v listed=%v", p, ok)
	}
	if qc, err := f.svc.Desk.SetQueuePaused(ctx, f.event, true); err != nil || !qc.Paused {
		t.Fatalf("pause: %+v, %v", qc, err)
	}
	if p, ok := queued(); !ok || !p {
		t.Errorf("after the pause: paused=%v listed=%v, want paused", p, ok)
	}
	if _, err := f.svc.Desk.SetQueuePaused(ctx, f.event, false); err != nil {
		t.Fatal(err)
	}
	if p, _ := queued(); p {
		t.Error("after the resume: still paused")
	}

	for _, bad := range []float64{0, -1, MaxQueueRate + 1} {
		if _, err := f.svc.Desk.SetQueueRate(ctx, f.event, bad); !errors.Is(err, ErrInvalidRate) {
			t.Errorf("rate %g: %v, want ErrInvalidRate", bad, err)
		}
	}
	if qc, err := f.svc.Desk.SetQueueRate(ctx, f.event, 12.5); err != nil || qc.Rate != 12.5 {
		t.Errorf("rate 12.5: %+v, %v", qc, err)
	}
	if _, err := f.svc.Desk.SetQueueRate(ctx, 999999, 5); !errors.Is(err, ErrEventNotFound) {
		t.Errorf("rate of no event: %v, want ErrEventNotFound", err)
	}
	for _, bad := range []int{0, -1, MaxQueueSlots + 1} {
		if _, err := f.svc.Desk.SetQueueSlots(ctx, f.event, bad); !errors.Is(err, ErrInvalidSlots) {
			t.Errorf("slots %d: %v, want ErrInvalidSlots", bad, err)
		}
	}
	if qc, err := f.svc.Desk.SetQueueSlots(ctx, f.event, 75); err != nil || qc.WasSlots != c.QueueSlots || qc.Slots != 75 || qc.Rate != 12.5 {
		t.Errorf("slots 75: %+v, %v; want from %d to 75, the rate kept", qc, err, c.QueueSlots)
	}
	if _, err := f.svc.Desk.SetQueueSlots(ctx, 999999, 5); !errors.Is(err, ErrEventNotFound) {
		t.Errorf("slots of no event: %v, want ErrEventNotFound", err)
	}
}
