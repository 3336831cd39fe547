package web_test

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"

	"boxoffice/internal/browsertest"
)

// TestBrowserAllInPrice: what a buyer is told a ticket costs agrees everywhere, down
// to the charge. On an event with a per-ticket fee (two rows: every method's and the
// online one), a per-order fee and tax, the event page's first price, the price a
// seat's tooltip shows on hover, and the basket's total for two seats (twice the
// first price plus the order fee) are the amount the test provider took.
func TestBrowserAllInPrice(t *testing.T) {
	t.Parallel()
	app := newTestApp(t)
	ev := smallEvent(t, app.Pool, "allin")
	for _, q := range []string{
		`INSERT INTO event_pricing (event_id, tax_rate_bp, tax_label) VALUES ($1, 2000, 'VAT')`,
		`INSERT INTO event_fees (event_id, method, per_ticket_cents, per_order_cents) VALUES ($1, 'all', 150, 200), ($1, 'online', 25, 0)`,
		`WITH t AS (INSERT INTO ticket_types (event_id, name, counts_as_adult) VALUES ($1, 'Adult', true) RETURNING id)
		 INSERT INTO ticket_type_prices (event_id, type_id, price_tier_id, price_cents) SELECT $1, t.id, p.id, 1800 FROM t, price_tiers p WHERE p.event_id = $1`,
	} {
		if _, err := app.Pool.Exec(t.Context(), q, ev); err != nil {
			t.Fatal(err)
		}
	}
	// 18.00 + 1.50 + 0.25 a ticket; 2.00 an order.
	const first, perOrder, total, totalText = "€19.75", "€2", 2*1975 + 200, "€41.50"

	b := browsertest.New(t)
	ctx := b.NewContext(t)
	browsertest.Run(t, ctx, chromedp.NavigateResponse(app.URL+"/events/allin"))
	prices := js[string](t, ctx, `document.querySelector("#availability ul.prices li strong").textContent`)
	if want := first + " incl. fees + " + perOrder + " per order"; prices != want {
		t.Fatalf("event page's first price: got %q, want %q", prices, want)
	}

	browsertest.Run(t, ctx, chromedp.NavigateResponse(app.URL+"/events/allin/seats"))
	waitJS(t, ctx, "the page's scripts", `document.readyState === "complete" && document.documentElement.classList.contains("js") && typeof htmx === "object"`, browsertest.Timeout)
	seat := firstAvailable(t, ctx)
	box := js[[]float64](t, ctx, `(() => { const r = document.querySelector("#`+seat+` input").getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; })()`)
	browsertest.Do(t, ctx, chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, box[0], box[1]))
	waitJS(t, ctx, "the hovered seat's tooltip", `document.getElementById("seat-info").textContent !== ""`, browsertest.Timeout)
	tip := js[string](t, ctx, `document.getElementById("seat-info").textContent`)
	if !strings.Contains(tip, ", "+first+" incl. fees,") {
		t.Errorf("the hovered seat's tooltip: got %q, want the price %s incl. fees", tip, first)
	}

	browsertest.Do(t, ctx, chromedp.Click(chromedp.CSS("#"+seat+" input")))
	waitJS(t, ctx, "seat "+seat+" to show as the buyer's", hasClass(seat, "mine"), browsertest.Timeout)
	second := firstAvailable(t, ctx)
	browsertest.Do(t, ctx, chromedp.Click(chromedp.CSS("#"+second+" input")))
	waitJS(t, ctx, "two lines in the basket", basketLines+` === 2`, browsertest.Timeout)
	basket := js[string](t, ctx, `document.querySelector("#hold-panel .total strong").textContent.trim()`)
	if basket != totalText {
		t.Errorf("the basket's total: got %q, want %q (2 × %s + %s)", basket, totalText, first, perOrder)
	}

	payWithTestCard(t, ctx, "#hold-panel .basket-summary a.button", "allin@example.com")
	waitJS(t, ctx, "two tickets", `document.querySelectorAll(".tickets .ticket").length === 2`, 20*time.Second)
	if n := count(t, app.Pool, `SELECT p.amount_cents FROM payments p JOIN orders o ON o.id = p.order_id
		WHERE o.event_id = $1 AND p.state = 'succeeded'`, ev); n != total {
		t.Errorf("charged %d, want %d: what the pages said", n, total)
	}
}
