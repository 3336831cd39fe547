package payment

import (
	"errors"
	"testing"

	"boxoffice/internal/booking"
)

// charged is a provider with one charge taken and its webhook received.
func charged(t *testing.T) (*receiver, *TestProvider, booking.ChargeResult) {
	t.Helper()
	rc := newReceiver(t, nil)
	p := newProvider(t, rc, Config{})
	ch, err := charge(t, p, cardOK, DeliverNormal)
	if err != nil {
		t.Fatal(err)
	}
	rc.next(t)
	return rc, p, ch
}

// TestRefundLookUp: a refund is found by its id, and by its key among its payment's
// refunds; a key never used is not found.
func TestRefundLookUp(t *testing.T) {
	t.Parallel()
	rc, p, ch := charged(t)
	r, err := p.Refund(t.Context(), booking.RefundRequest{Key: "refund_1", PaymentID: ch.PaymentID, OrderID: 1, EventID: 2, AmountCents: 3000})
	if err != nil {
		t.Fatal(err)
	}
	rc.next(t)
	want := booking.RefundStatus{RefundID: r.RefundID, State: booking.RefundSucceeded, AmountCents: 3000}
	for _, ref := range []booking.RefundRef{{RefundID: r.RefundID}, {PaymentID: ch.PaymentID, Key: "refund_1"}} {
		if got, err := p.LookUpRefund(t.Context(), ref); err != nil || got != want {
			t.Errorf("LookUpRefund(%+v): got %+v, %v, want %+v", ref, got, err, want)
		}
	}
	for _, ref := range []booking.RefundRef{{RefundID: "re_none"}, {PaymentID: ch.PaymentID, Key: "refund_2"}, {PaymentID: "pi_none", Key: "refund_1"}} {
		if got, err := p.LookUpRefund(t.Context(), ref); err != nil || got.State != booking.RefundNotFound {
			t.Errorf("LookUpRefund(%+v): got %+v, %v, want not found", ref, got, err)
		}
	}
	closeProvider(t, p)
	rc.noMore(t, 2)
}

// TestRefundHeldThenFailed: a held refund stays pending with no webhook until it is
// settled; failed, its webhook says so and its amount may be refunded again.
func TestRefundHeldThenFailed(t *testing.T) {
	t.Parallel()
	rc, p, ch := charged(t)
	p.SetRefundMode(RefundHeld)
	r, err := p.Refund(t.Context(), booking.RefundRequest{Key: "refund_1", PaymentID: ch.PaymentID, OrderID: 1, EventID: 2, AmountCents: 3000})
	if err != nil || r.State != booking.RefundPending {
		t.Fatalf("Refund: got %+v, %v, want pending", r, err)
	}
	if st, _ := p.LookUpRefund(t.Context(), booking.RefundRef{RefundID: r.RefundID}); st.State != booking.RefundPending {
		t.Errorf("held refund: got %+v, want pending", st)
	}
	if err := p.SettleRefund(t.Context(), r.RefundID, booking.RefundFailed); err != nil {
		t.Fatal(err)
	}
	d := rc.next(t)
	if ev := d.ev.Booking(); ev.Kind != booking.KindRefundFailed || ev.RefundID != r.RefundID || ev.RefundKey != "refund_1" {
		t.Errorf("webhook: got %+v, want the refund failed", ev)
	}
	if got := p.Refunded(ch.PaymentID); got != 0 {
		t.Errorf("refunded after the failure: got %d, want 0", got)
	}
	if p.Refunds(ch.PaymentID) != 0 {
		t.Errorf("refunds that did not fail: got %d, want 0", p.Refunds(ch.PaymentID))
	}
	closeProvider(t, p)
	rc.noMore(t, 2)
}

// TestRefundLostAnswerAndExpiredKey: a refund whose answer is lost is made and found
// by its key; once the provider forgot the key, a repeat makes a second refund (which
// is why booking looks a refund up before asking again that late).
func TestRefundLostAnswerAndExpiredKey(t *testing.T) {
	t.Parallel()
	rc, p, ch := charged(t)
	p.SetRefundMode(RefundLost)
	req := booking.RefundRequest{Key: "refund_1", PaymentID: ch.PaymentID, OrderID: 1, EventID: 2, AmountCents: 1000}
	if _, err := p.Refund(t.Context(), req); !errors.Is(err, ErrTimeout) {
		t.Fatalf("Refund: got %v, want ErrTimeout", err)
	}
	if st, _ := p.LookUpRefund(t.Context(), booking.RefundRef{PaymentID: ch.PaymentID, Key: "refund_1"}); st.State != booking.RefundSucceeded {
		t.Errorf("lookup by key: got %+v, want the refund, succeeded", st)
	}
	p.SetRefundMode(RefundNormal)
	if _, err := p.Refund(t.Context(), req); err != nil || p.Refunds(ch.PaymentID) != 1 {
		t.Errorf("repeat inside the window: got %v and %d refunds, want 1", err, p.Refunds(ch.PaymentID))
	}
	p.ExpireKeys()
	if _, err := p.Refund(t.Context(), req); err != nil || p.Refunds(ch.PaymentID) != 2 {
		t.Errorf("repeat after the window: got %v and %d refunds, want 2", err, p.Refunds(ch.PaymentID))
	}
	rc.next(t)
	closeProvider(t, p)
	rc.noMore(t, 2)
}
