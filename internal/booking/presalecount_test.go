package booking

import "testing"

// TestPresaleConfirmCountsCode: a presale order's confirmation counts its places
// against its code by the conditional statement (places_used, an access_code_uses row
// the order shows); places that no longer fit the quota undo the sale, which is
// refunded as presale_quota.
func TestPresaleConfirmCountsCode(t *testing.T) {
	t.Parallel()
	f := newFixture(t, windowSpec(), DefaultConfig())
	provider := newFakeProvider()
	f = f.withProvider(provider)
	f.setSale(t, beforeOnsale)
	code := f.accessCode(t, f.event, "MEMBERS", 3, presaleOpen, false)
	seats := f.rowSeats(t, "Floor", "A")
	// buy holds with the code, checks out, sets places_used to count (-1: as it is),
	// pays and confirms.
	buy := func(buyer string, seats []int64, count int) (Order, PaymentOutcome) {
		t.Helper()
		h, err := f.svc.Buyer.Hold(t.Context(), HoldRequest{EventID: f.event, Buyer: buyer, SeatIDs: seats, AccessCode: code})
		if err != nil {
			t.Fatalf("presale hold: %v", err)
		}
		o := f.checkout(t, h, buyer)
		if count >= 0 {
			if _, err := f.pool.Exec(t.Context(), `UPDATE access_codes SET places_used = $2 WHERE id = $1`, code, count); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := f.svc.Buyer.Pay(t.Context(), o.ID, buyer, PaymentMethod{Method: "4242 4242 4242 4242"}); err != nil {
			t.Fatalf("pay: %v", err)
		}
		got, err := f.svc.Buyer.ApplyPayment(t.Context(), "test", provider.chargeOf(t, o.ID).event("evt_"+buyer, KindPaymentSucceeded))
		if err != nil {
			t.Fatalf("confirm: %v", err)
		}
		return o, got
	}
	used := func() int {
		return f.count(t, `SELECT places_used FROM access_codes WHERE id = $1`, code)
	}

	o, got := buy("ada", seats[:2], -1)
	if got != OutcomeConfirmed {
		t.Fatalf("a presale sale: got %q, want %q", got, OutcomeConfirmed)
	}
	if n := used(); n != 2 {
		t.Errorf("places_used: got %d, want the 2 confirmed", n)
	}
	ch, err := f.svc.Buyer.OrderCharges(t.Context(), o)
	if err != nil || ch.AccessCode != "MEMBERS" || ch.CodePlaces != 2 {
		t.Errorf("the order's charges: code %q, %d places, err %v; want MEMBERS and 2", ch.AccessCode, ch.CodePlaces, err)
	}

	// One place is left of three, as hold_presale counts them. A count that went
	// wrong elsewhere (places_used says all three are gone) is caught at confirmation.
	late, outcome := buy("bob", seats[2:3], 3)
	if outcome != OutcomeRefundPending {
		t.Errorf("a sale past the quota: got %q, want %q", outcome, OutcomeRefundPending)
	}
	if status, reason := f.orderStatus(t, late.ID); status != "refund_pending" || reason != ReasonPresaleQuota {
		t.Errorf("the order past the quota: %s (%s), want refund_pending (%s)", status, reason, ReasonPresaleQuota)
	}
	if n := f.soldTo(t, late.ID); n != 0 || used() != 3 {
		t.Errorf("past the quota: %d seats sold, places_used %d; want 0 and 3", n, used())
	}

	// The control: with a place more in the quota, the same kind of sale goes through
	// (bob's hold, unsold, still counts until it lapses).
	if _, err := f.pool.Exec(t.Context(), `UPDATE access_codes SET quota = 4 WHERE id = $1`, code); err != nil {
		t.Fatal(err)
	}
	fits, outcome := buy("cy", seats[3:4], -1)
	if outcome != OutcomeConfirmed || f.soldTo(t, fits.ID) != 1 || used() != 4 {
		t.Errorf("a sale within the quota: %q, %d seats sold, places_used %d; want confirmed, 1, 4", outcome, f.soldTo(t, fits.ID), used())
	}
}
