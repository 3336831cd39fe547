package payment

import (
	"sync"

	"boxoffice/internal/booking"
)

// ledger is what the test provider charged and refunded, as a real provider's
// records are: payments by id and by idempotency key, refunds by key. Lookups
// read it; repeats of a key are answered from it.
type ledger struct {
	mu       sync.Mutex
	byKey    map[string]*chargeRecord
	byID     map[string]*chargeRecord
	refunds  map[string]*refundRecord // by idempotency key, while the provider keeps it (ExpireKeys)
	reByID   map[string]*refundRecord // every refund made, by id
	perOrder map[int64]int            // charges taken, by boxoffice order id
	reMode   RefundMode               // what the next refunds do (SetRefundMode)
}

// chargeRecord is one charge taken (succeeded, or failed at the bank).
type chargeRecord struct {
	id, key  string
	orderID  int64
	amount   int64
	state    booking.PaymentState // PaymentSucceeded or PaymentFailed
	declined bool                 // refused at once, in Charge's answer
	refunded int64
	event    Event // the event that announces how it ended
}

// refundRecord is one refund made.
type refundRecord struct {
	id, key          string
	payment          string
	orderID, eventID int64
	amount           int64
	state            booking.RefundState
}

func newLedger() ledger {
	return ledger{
		byKey: map[string]*chargeRecord{}, byID: map[string]*chargeRecord{},
		refunds: map[string]*refundRecord{}, reByID: map[string]*refundRecord{}, perOrder: map[int64]int{},
	}
}

// find returns a copy of the charge named by id, else by key.
func (l *ledger) find(id, key string) (chargeRecord, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	c := l.byID[id]
	if c == nil && key != "" {
		c = l.byKey[key]
	}
	if c == nil {
		return chargeRecord{}, false
	}
	return *c, true
}
