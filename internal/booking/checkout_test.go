package booking

import (
	"errors"
	"log/slog"
	"reflect"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
)

// Checkout answers a new, unpaid order with the view it builds from what it read and
// wrote, without reading the order back: the answer must be what the order's view
// (Order, the order page's read) says of it, for seats and for standing places. A second
// checkout of the same hold reads the view, and answers the same.
func TestCheckoutAnswersAsTheOrderView(t *testing.T) {
	t.Parallel()
	f := demoFixture(t, DefaultConfig())
	seats := f.rowSeats(t, "Stalls", "A")[:3]
	places, err := f.holdGA(t, "ga", 2)
	if err != nil {
		t.Fatalf("hold places: %v", err)
	}
	for _, c := range []struct {
		name, buyer string
		hold        Hold
	}{
		{"seats", "seats", f.hold(t, "seats", seats...)},
		{"standing", "ga", places},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := f.checkout(t, c.hold, c.buyer)
			if got.Status != StatusPending || got.AmountCents == 0 {
				t.Fatalf("checkout: %+v, want a pending order with an amount", got)
			}
			want, err := f.svc.Buyer.Order(t.Context(), got.ID, c.buyer)
			if err != nil {
				t.Fatalf("order: %v", err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("checkout answered\n%+v\nthe order's view is\n%+v", got, want)
			}
			if again := f.checkout(t, c.hold, c.buyer); !reflect.DeepEqual(again, want) {
				t.Errorf("second checkout answered\n%+v\nthe order's view is\n%+v", again, want)
			}
		})
	}
}

// OrderEvent answers an order this service checked out from memory, with no
// connection: here its pool is closed. Another buyer's order is not found that way
// either, and a service that has not seen the order reads it and answers the same.
func TestOrderEventWithoutAConnection(t *testing.T) {
	t.Parallel()
	f := demoFixture(t, DefaultConfig())
	pool, err := pgxpool.New(t.Context(), f.pool.Config().ConnString())
	if err != nil {
		t.Fatal(err)
	}
	svc := New(pool, DefaultConfig(), nil, nil, slog.New(f.log))
	h := f.hold(t, "amy", f.rowSeats(t, "Stalls", "B")[:2]...)
	o, err := svc.Buyer.Checkout(t.Context(), h.ID, "amy", "amy@example.com")
	if err != nil {
		t.Fatalf("checkout: %v", err)
	}
	pool.Close()
	if ev, err := svc.Buyer.OrderEvent(t.Context(), o.ID, "amy"); err != nil || ev != f.event {
		t.Errorf("OrderEvent of amy's order with the pool closed: %d, %v; want %d", ev, err, f.event)
	}
	if _, err := svc.Buyer.OrderEvent(t.Context(), o.ID, "bob"); !errors.Is(err, ErrOrderNotFound) {
		t.Errorf("OrderEvent of amy's order for bob: %v, want ErrOrderNotFound", err)
	}
	other := f.withService(DefaultConfig()).svc.Buyer
	if ev, err := other.OrderEvent(t.Context(), o.ID, "amy"); err != nil || ev != f.event {
		t.Errorf("OrderEvent read by a service that did not check it out: %d, %v; want %d", ev, err, f.event)
	}
	if _, err := other.OrderEvent(t.Context(), o.ID, "bob"); !errors.Is(err, ErrOrderNotFound) {
		t.Errorf("OrderEvent read for bob: %v, want ErrOrderNotFound", err)
	}
	if _, err := other.OrderEvent(t.Context(), o.ID+1000, "amy"); !errors.Is(err, ErrOrderNotFound) {
		t.Errorf("OrderEvent of no order: %v, want ErrOrderNotFound", err)
	}
}

// orderOwners keeps the newer of two generations whole: an order put just before
// the turn is still known after it, and one two generations old is not.
func TestOrderOwnersGenerations(t *testing.T) {
	m := orderOwners{max: 3}
	for id := int64(1); id <= 4; id++ {
		m.put(id, orderOwner{event: 10 * id, buyer: "b"})
	}
	for id := int64(1); id <= 4; id++ {
		if o, ok := m.get(id); !ok || o.event != 10*id {
			t.Errorf("order %d after 4 puts: %+v, %v; want event %d", id, o, ok, 10*id)
		}
	}
	for id := int64(5); id <= 7; id++ {
		m.put(id, orderOwner{event: 10 * id, buyer: "b"})
	}
	if _, ok := m.get(1); ok {
		t.Error("order 1 still known two generations on")
	}
	if o, ok := m.get(7); !ok || o.event != 70 {
		t.Errorf("order 7: %+v, %v; want event 70", o, ok)
	}
}
