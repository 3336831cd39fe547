package web_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"boxoffice/internal/browsertest"
	"boxoffice/internal/mail/mailtest"
)

// basketLines is a JavaScript expression: how many lines the basket panel lists.
const basketLines = `document.querySelectorAll("#hold-panel .basket-lines li").length`

// payWithTestCard follows the checkout link (a CSS selector), gives email and the
// test card, and pays, failing the test unless the order page comes back.
func payWithTestCard(t *testing.T, ctx context.Context, link, email string) {
	t.Helper()
	browsertest.Follow(t, ctx, "checkout", chromedp.Click(chromedp.CSS(link)), "/checkout")
	browsertest.Do(t, ctx,
		chromedp.WaitVisible(chromedp.CSS("form.checkout-form")),
		chromedp.SendKeys(chromedp.CSS("#email"), email),
		chromedp.SendKeys(chromedp.CSS("#card"), "4242 4242 4242 4242"),
	)
	browsertest.Follow(t, ctx, "paying", chromedp.Click(chromedp.CSS("form.checkout-form button[type=submit]")), "/orders/")
}

// TestBrowserBasket: two seats clicked on the map make one basket (one hold, one
// summary, two lines); a third clicked and unticked again leaves it; checkout and the
// test card then give one order with two tickets and one email.
func TestBrowserBasket(t *testing.T) {
	t.Parallel()
	app, catcher := newMailApp(t)
	b := browsertest.New(t)
	ctx := b.NewContext(t)
	seatPage(t, ctx, app.URL, true)
	var seats []string
	for range 3 {
		seat := firstAvailable(t, ctx)
		browsertest.Do(t, ctx, chromedp.Click(chromedp.CSS("#"+seat+" input")))
		waitJS(t, ctx, "seat "+seat+" to show as the buyer's", hasClass(seat, "mine"), browsertest.Timeout)
		seats = append(seats, seat)
	}
	waitJS(t, ctx, "three lines in the basket", basketLines+` === 3`, browsertest.Timeout)
	// Unticking the third seat on the map takes it out of the basket, and only it.
	browsertest.Do(t, ctx, chromedp.Click(chromedp.CSS("#"+seats[2]+" input")))
	waitJS(t, ctx, "the unticked seat to be free again", hasClass(seats[2], "avail"), browsertest.Timeout)
	waitJS(t, ctx, "two lines in the basket", basketLines+` === 2`, browsertest.Timeout)
	for _, seat := range seats[:2] {
		if got := seatClass(t, ctx, seat); !strings.Contains(got, "mine") {
			t.Errorf("seat %s: got class %q, want still the buyer's", seat, got)
		}
	}
	if n := js[int](t, ctx, `document.querySelectorAll("#hold-panel .basket-summary").length`); n != 1 {
		t.Fatalf("basket summaries: got %d, want 1", n)
	}
	if n := count(t, app.Pool, `SELECT count(*) FROM holds WHERE event_id = $1 AND hold_is_live(holds)`, app.EventID); n != 1 {
		t.Errorf("live holds: got %d, want 1", n)
	}

	addr := mailtest.Address(t)
	payWithTestCard(t, ctx, "#hold-panel .basket-summary a.button", addr)
	waitJS(t, ctx, "two tickets", `document.querySelectorAll(".tickets .ticket").length === 2`, 20*time.Second)
	if n := count(t, app.Pool, `SELECT count(*) FROM orders WHERE event_id = $1`, app.EventID); n != 1 {
		t.Errorf("orders: got %d, want 1", n)
	}
	if n := count(t, app.Pool, `SELECT count(*) FROM tickets t JOIN orders o ON o.id = t.order_id
		WHERE o.event_id = $1 AND o.status = 'confirmed' AND t.voided_at IS NULL`, app.EventID); n != 2 {
		t.Errorf("tickets of the confirmed order: got %d, want 2", n)
	}
	catcher.Wait(t, addr, 1)
	if got, err := catcher.To(t.Context(), addr); err != nil || len(got) != 1 {
		t.Errorf("emails to the buyer: got %d (%v), want 1", len(got), err)
	}
	noConsoleErrors(t, ctx)
}
