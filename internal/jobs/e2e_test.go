package jobs_test

import (
	"strings"
	"testing"

	"boxoffice/internal/apptest"
	"boxoffice/internal/booking"
	"boxoffice/internal/mail/mailtest"
)

// TestConfirmationThroughBooking: the production program, a real order paid by a
// webhook that the provider delivers three times: the order's confirmation arrives
// once, with every ticket of the order.
func TestConfirmationThroughBooking(t *testing.T) {
	t.Parallel()
	p := apptest.New(t, apptest.Options{Mail: true})
	p.RunJobs(t)
	ctx := t.Context()
	to := mailtest.Address(t)

	h, err := p.Booking.Buyer.Hold(ctx, booking.HoldRequest{EventID: p.EventID, Buyer: "buyer-1", Quantity: 2})
	if err != nil {
		t.Fatal(err)
	}
	o, err := p.Booking.Buyer.Checkout(ctx, h.ID, "buyer-1", to)
	if err != nil {
		t.Fatal(err)
	}
	ev := booking.PaymentEvent{
		ID: "evt_e2e_" + strings.TrimSuffix(to, "@boxoffice.test"), Kind: booking.KindPaymentSucceeded,
		PaymentID: "pi_e2e", OrderID: o.ID, EventID: o.EventID, AmountCents: int64(o.AmountCents),
	}
	for range 3 {
		if _, err := p.Booking.Buyer.ApplyPayment(ctx, "test", ev); err != nil {
			t.Fatal(err)
		}
	}
	p.WaitJobs(t)

	got := p.Mail.Wait(t, to, 1)
	if len(got) != 1 {
		t.Fatalf("got %d confirmations, want 1", len(got))
	}
	r, err := p.Booking.Worker.Receipt(ctx, o.ID)
	if err != nil {
		t.Fatal(err)
	}
	if r.Order.Status != booking.StatusConfirmed || len(r.Order.Tickets) != 2 {
		t.Fatalf("order is %s with %d tickets, want confirmed with 2", r.Order.Status, len(r.Order.Tickets))
	}
	msg, err := p.Mail.Message(ctx, got[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, tk := range r.Order.Tickets {
		if !strings.Contains(msg.Text, tk.Code) {
			t.Errorf("the email lacks ticket %s:\n%s", tk.Code, msg.Text)
		}
	}
	if len(msg.Inline) != 2 {
		t.Errorf("got %d QR codes, want 2", len(msg.Inline))
	}
	// The webhook replayed after the email went out asks for nothing more.
	if _, err := p.Booking.Buyer.ApplyPayment(ctx, "test", ev); err != nil {
		t.Fatal(err)
	}
	p.WaitJobs(t)
	if again, err := p.Mail.To(ctx, to); err != nil || len(again) != 1 {
		t.Errorf("after a late replay: got %d emails (%v), want still 1", len(again), err)
	}
}
