package web_test

import (
	"net/http"
	"sync"
	"testing"

	"boxoffice/internal/booking"
	"boxoffice/internal/booking/bookingtest"
)

// TestPayOnceAtATime: paying twice at once before the webhook arrives charges once;
// after a declined card the buyer may pay again; a confirmed order cannot be paid.
func TestPayOnceAtATime(t *testing.T) {
	t.Parallel()
	app := newTestApp(t)
	c := app.newClient(t)
	seats := firstSeats(t, app.Pool, app.EventID, 2)
	h := c.hold(app.EventID, seats...)
	co := c.checkout(h.HoldID)
	path := "/api/v1/orders/" + itoa(co.OrderID) + "/pay"

	if st := c.do("POST", path, map[string]string{"card": "4000 0000 0000 0002"}, nil); st != http.StatusPaymentRequired {
		t.Fatalf("declined card: got %d, want 402", st)
	}

	const payers = 8
	statuses := make([]int, payers)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range payers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			statuses[i] = c.do("POST", path, map[string]string{"card": "4242 4242 4242 4242", "delivery": "late"}, nil)
		}()
	}
	close(start)
	wg.Wait()
	accepted := 0
	for _, st := range statuses {
		switch st {
		case http.StatusAccepted:
			accepted++
		case http.StatusConflict:
		default:
			t.Errorf("concurrent pay: got status %d, want 202 or 409", st)
		}
	}
	if accepted != 1 {
		t.Fatalf("concurrent pays accepted: got %d, want 1 (statuses %v)", accepted, statuses)
	}
	waitOrder(t, c, co.OrderID, booking.StatusConfirmed)
	if st := c.do("POST", path, map[string]string{"card": "4242 4242 4242 4242"}, nil); st != http.StatusConflict {
		t.Errorf("paying a confirmed order: got %d, want 409", st)
	}
	bookingtest.Check(t, app.Pool, app.EventID)
}
