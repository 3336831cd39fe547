package payment

import (
	"errors"
	"testing"
	"time"

	"boxoffice/internal/booking"
)

// TestChargeUnknownOutcomes: the modes that hide a charge's outcome from the caller.
// The lookup tells what really happened, by the payment's key.
func TestChargeUnknownOutcomes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		mode      Delivery
		wantErr   error                // Charge's answer
		webhook   bool                 // whether the event is delivered
		wantState booking.PaymentState // what a lookup by key says
	}{
		{DeliverNone, nil, false, booking.PaymentSucceeded},
		{DeliverTimeout, ErrTimeout, true, booking.PaymentSucceeded},
		{DeliverLost, ErrTimeout, false, booking.PaymentSucceeded},
		{DeliverError, ErrUnavailable, false, booking.PaymentNotFound},
	}
	for _, tt := range tests {
		t.Run(string(tt.mode), func(t *testing.T) {
			t.Parallel()
			rc := newReceiver(t, nil)
			p := newProvider(t, rc, Config{})
			req := booking.ChargeRequest{Key: "key_" + string(tt.mode), OrderID: 1, EventID: 2, AmountCents: 3000, Method: cardOK, Simulate: string(tt.mode)}
			_, err := p.Charge(t.Context(), req)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("Charge: got %v, want %v", err, tt.wantErr)
			}
			for _, definite := range []error{booking.ErrCardDeclined, booking.ErrInvalidCard, booking.ErrNotCharged} {
				if errors.Is(err, definite) {
					t.Errorf("Charge: got %v, a definite failure; want an unknown outcome", err)
				}
			}
			st, err := p.LookUp(t.Context(), booking.PaymentRef{Key: req.Key})
			if err != nil || st.State != tt.wantState {
				t.Errorf("LookUp by key: got %+v, %v, want %s", st, err, tt.wantState)
			}
			if tt.webhook {
				if d := rc.next(t); d.ev.PaymentID != st.PaymentID || d.ev.PaymentKey != req.Key {
					t.Errorf("webhook: got %+v, want payment %s with key %s", d.ev, st.PaymentID, req.Key)
				}
			}
			closeProvider(t, p)
			want := 0
			if tt.webhook {
				want = 1
			}
			rc.noMore(t, want)
		})
	}
}

// TestChargeSameKey: a repeat of a key charges nothing more and sends nothing more; it
// answers as the first call did, a decline included.
func TestChargeSameKey(t *testing.T) {
	t.Parallel()
	rc := newReceiver(t, nil)
	p := newProvider(t, rc, Config{})
	for _, card := range []string{cardOK, "4000 0000 0000 0002"} {
		req := booking.ChargeRequest{Key: "same_" + card, OrderID: 1, EventID: 2, AmountCents: 3000, Method: card}
		first, err1 := p.Charge(t.Context(), req)
		again, err2 := p.Charge(t.Context(), req)
		if first != again || !errors.Is(err2, err1) {
			t.Errorf("%s: got %+v, %v then %+v, %v, want the same answer", card, first, err1, again, err2)
		}
		rc.next(t)
	}
	if n := p.Charges(1); n != 2 {
		t.Errorf("charges: got %d, want 2 (one per key)", n)
	}
	closeProvider(t, p)
	rc.noMore(t, 2)
}

// TestChargeFailsLater: card 4000 0000 0000 0341 is taken ("processing") and its
// failure comes by webhook; a lookup says failed.
func TestChargeFailsLater(t *testing.T) {
	t.Parallel()
	rc := newReceiver(t, nil)
	p := newProvider(t, rc, Config{})
	ch, err := charge(t, p, "4000 0000 0000 0341", DeliverNormal)
	if err != nil || ch.State != booking.PaymentProcessing {
		t.Fatalf("Charge: got %+v, %v, want processing", ch, err)
	}
	if d := rc.next(t); d.ev.Type != EventFailed || d.ev.PaymentID != ch.PaymentID || d.ev.Booking().Kind != booking.KindPaymentFailed {
		t.Errorf("webhook: got %+v, want the payment's failure", d.ev)
	}
	if st, _ := p.LookUp(t.Context(), booking.PaymentRef{PaymentID: ch.PaymentID}); st.State != booking.PaymentFailed {
		t.Errorf("LookUp: got %+v, want failed", st)
	}
}

// TestRefund: a refund answers pending and is confirmed by a refund.updated webhook
// carrying its key; a repeat of the key refunds nothing more; a lookup counts it; a
// refund of more than is left, or of no payment, is refused.
func TestRefund(t *testing.T) {
	t.Parallel()
	rc, p, ch := charged(t)
	req := booking.RefundRequest{Key: "refund_1", PaymentID: ch.PaymentID, OrderID: 1, EventID: 2, AmountCents: 3000}
	r, err := p.Refund(t.Context(), req)
	if err != nil || r.State != booking.RefundPending || r.RefundID == "" {
		t.Fatalf("Refund: got %+v, %v, want pending with an id", r, err)
	}
	d := rc.next(t)
	ev := d.ev.Booking()
	want := booking.PaymentEvent{ID: d.ev.ID, Kind: booking.KindRefundSucceeded, PaymentID: ch.PaymentID, RefundID: r.RefundID,
		RefundKey: "refund_1", OrderID: 1, EventID: 2, AmountCents: 3000, Created: d.ev.Created}
	if ev != want {
		t.Errorf("refund webhook: got %+v, want %+v", ev, want)
	}
	if again, err := p.Refund(t.Context(), req); err != nil || again != r {
		t.Errorf("Refund again: got %+v, %v, want %+v", again, err, r)
	}
	if st, _ := p.LookUp(t.Context(), booking.PaymentRef{PaymentID: ch.PaymentID}); st.RefundedCents != 3000 {
		t.Errorf("LookUp: got %+v, want 3000 refunded", st)
	}
	for _, bad := range []booking.RefundRequest{
		{Key: "refund_2", PaymentID: ch.PaymentID, AmountCents: 1},
		{Key: "refund_3", PaymentID: "pi_none", AmountCents: 1},
	} {
		if _, err := p.Refund(t.Context(), bad); err == nil {
			t.Errorf("Refund(%+v): got nil, want an error", bad)
		}
	}
	closeProvider(t, p)
	rc.noMore(t, 2)
}

// TestResend: the event that announced a charge's end is sent again on demand, with
// its id unchanged.
func TestResend(t *testing.T) {
	t.Parallel()
	rc := newReceiver(t, nil)
	p := newProvider(t, rc, Config{})
	ch, err := charge(t, p, cardOK, DeliverNone)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Resend(t.Context(), ch.PaymentID); err != nil {
		t.Fatal(err)
	}
	d := rc.next(t)
	if d.ev != p.Event(ch.PaymentID) || d.ev.Type != EventSucceeded {
		t.Errorf("resent: got %+v, want %+v", d.ev, p.Event(ch.PaymentID))
	}
	if err := p.Resend(t.Context(), "pi_none"); err == nil {
		t.Error("Resend of no payment: got nil, want an error")
	}
	closeProvider(t, p)
	rc.noMore(t, 1)
}

// TestRefundEventKinds: a refund.updated event round-trips through its payload and
// signature, and booking acts on the statuses that settle a refund only.
func TestRefundEventKinds(t *testing.T) {
	t.Parallel()
	for status, want := range map[string]booking.PaymentEventKind{
		"succeeded": booking.KindRefundSucceeded, "failed": booking.KindRefundFailed,
		"canceled": booking.KindRefundFailed, "pending": "",
	} {
		ev := Event{ID: "evt_R", Type: EventRefundUpdated, PaymentID: "pi_P", RefundID: "re_R", RefundKey: "refund_k",
			RefundState: status, OrderID: 42, EventID: 7, AmountCents: 1250, Created: sampleEvent(EventSucceeded).Created}
		body, err := Payload(ev)
		if err != nil {
			t.Fatal(err)
		}
		got, err := Verify(body, Sign(body, testSecret, time.Now()), testSecret)
		if err != nil || got != ev {
			t.Errorf("%s: got %+v, %v, want %+v", status, got, err, ev)
		}
		if k := got.Booking().Kind; k != want {
			t.Errorf("%s: got kind %q, want %q", status, k, want)
		}
	}
}
