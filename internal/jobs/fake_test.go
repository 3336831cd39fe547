package jobs_test

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"boxoffice/internal/booking"
)

// fakeBooking stands in for the booking service behind the workers: it answers
// Receipt from orders the test made, fails RunRefund as often as told, and counts.
type fakeBooking struct {
	mu           sync.Mutex
	orders       map[int64]booking.Receipt
	receiptCalls map[int64]int
	refundCalls  map[int64]int
	refundFails  int
	// reconciled gets a value at each reconciliation pass (dropped when full).
	reconciled chan struct{}
	// gate, when set (before the queue runs), holds every Receipt until it is closed:
	// the email jobs that read one then hold their workers.
	gate chan struct{}
}

func newFakeBooking() *fakeBooking {
	return &fakeBooking{
		orders: map[int64]booking.Receipt{}, receiptCalls: map[int64]int{}, refundCalls: map[int64]int{},
		reconciled: make(chan struct{}, 1),
	}
}

func (f *fakeBooking) put(r booking.Receipt) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.orders[r.Order.ID] = r
}

func (f *fakeBooking) get(id int64) booking.Receipt {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.orders[id]
}

func (f *fakeBooking) failRefunds(n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.refundFails = n
}

func (f *fakeBooking) receipts(id int64) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.receiptCalls[id]
}

func (f *fakeBooking) refunds(id int64) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.refundCalls[id]
}

func (f *fakeBooking) Receipt(ctx context.Context, orderID int64) (booking.Receipt, error) {
	if f.gate != nil {
		select {
		case <-f.gate:
		case <-ctx.Done():
			return booking.Receipt{}, ctx.Err()
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.receiptCalls[orderID]++
	r, ok := f.orders[orderID]
	if !ok {
		return r, booking.ErrOrderNotFound
	}
	return r, nil
}

func (f *fakeBooking) RunRefund(_ context.Context, refundID int64) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.refundCalls[refundID]++
	if f.refundFails > 0 {
		f.refundFails--
		return fmt.Errorf("refund %d: %w", refundID, errors.New("provider answered 503"))
	}
	return nil
}

func (f *fakeBooking) Reconcile(context.Context) (booking.ReconcileResult, error) {
	select {
	case f.reconciled <- struct{}{}:
	default:
	}
	return booking.ReconcileResult{}, nil
}
