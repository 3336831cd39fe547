package booking

import (
	"reflect"
	"testing"
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
			want, err := f.svc.Order(t.Context(), got.ID, c.buyer)
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
