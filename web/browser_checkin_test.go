package web_test

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"boxoffice/internal/browsertest"
	"boxoffice/internal/staff"
)

// TestBrowserCheckin: at the door, on a phone-sized screen (390 by 844 CSS pixels,
// touch), a member of the door staff logs in, chooses the event and gate, and checks a
// ticket in by typing its code (a handheld scanner types the same way): the answer
// "valid" appears in colour without a reload, the code field is empty and focused for
// the next scan, and a second scan of the same code says it was used, at which gate.
// The page is no wider than the screen and its controls are at least 44 px tall.
func TestBrowserCheckin(t *testing.T) {
	t.Parallel()
	a := newTestApp(t)
	o := a.buyAs(t, "phone@example.com", firstSeats(t, a.Pool, a.EventID, 1)...)
	m := a.addStaff(t, staff.Door, "Door Phone")
	b := browsertest.New(t)
	ctx := b.NewContext(t)
	browsertest.Do(t, ctx, chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(3), chromedp.EmulateMobile, chromedp.EmulateTouch))

	browsertest.Do(t, ctx,
		chromedp.Navigate(a.URL+"/admin/checkin"),
		chromedp.WaitVisible(chromedp.CSS("#password")),
		chromedp.SendKeys(chromedp.CSS("#email"), m.Email),
		chromedp.SendKeys(chromedp.CSS("#password"), staffPassword),
		chromedp.Submit(chromedp.CSS("#password")),
		chromedp.WaitVisible(chromedp.CSS("#gate")),
		chromedp.SetValue(chromedp.CSS("#event"), itoa(a.EventID)),
		chromedp.SendKeys(chromedp.CSS("#gate"), "North"),
		chromedp.Submit(chromedp.CSS("#gate")),
		chromedp.WaitVisible(chromedp.CSS("#code")),
	)
	waitJS(t, ctx, "htmx", `typeof htmx === "object"`, browsertest.Timeout)
	if id := js[string](t, ctx, `document.activeElement.id`); id != "code" {
		t.Errorf("focus on the check-in page: got #%s, want the code field", id)
	}

	browsertest.Do(t, ctx, chromedp.SendKeys(chromedp.CSS("#code"), o.Tickets[0].Code+"\r"))
	waitJS(t, ctx, "the valid answer", `!!document.querySelector("#checkin-result .checkin-valid")`, browsertest.Timeout)
	waitJS(t, ctx, "the code field ready again", `document.activeElement.id === "code" && document.getElementById("code").value === ""`, browsertest.Timeout)
	if txt := browsertest.Run(t, ctx, chromedp.Text(chromedp.CSS("#checkin-result"))); !strings.Contains(txt, "Valid") || !strings.Contains(txt, "row") {
		t.Errorf("answer: got %q, want valid with the seat", txt)
	}

	browsertest.Do(t, ctx, chromedp.SendKeys(chromedp.CSS("#code"), o.Tickets[0].Code+"\r"))
	waitJS(t, ctx, "the used answer", `!!document.querySelector("#checkin-result .checkin-used")`, browsertest.Timeout)
	if txt := browsertest.Run(t, ctx, chromedp.Text(chromedp.CSS("#checkin-result"))); !strings.Contains(txt, "Already used") || !strings.Contains(txt, "gate North") {
		t.Errorf("second answer: got %q, want already used at gate North", txt)
	}

	if over := js[float64](t, ctx, `document.documentElement.scrollWidth - window.innerWidth`); over > 1 {
		t.Errorf("check-in page on a phone: %.0f CSS px wider than the screen", over)
	}
	small := js[string](t, ctx, `[...document.querySelectorAll("#main button:not([hidden]), #main input:not([type=hidden]), #main select, .admin-nav a")]
		.filter(e => e.offsetParent !== null && e.getBoundingClientRect().height < 44)
		.map(e => e.id || e.textContent.trim()).join(", ")`)
	if small != "" {
		t.Errorf("controls under 44 CSS px tall on a phone: %s", small)
	}
	noConsoleErrors(t, ctx)

	// A code of blanks is refused by the server (400), and the refusal is shown in the
	// same place (htmx swaps 4xx answers there through response-targets). It comes
	// after the console check: the browser logs the 400 as a console error.
	browsertest.Do(t, ctx, chromedp.SendKeys(chromedp.CSS("#code"), "   \r"))
	waitJS(t, ctx, "the refusal", `!!document.querySelector("#checkin-result .checkin-error")`, browsertest.Timeout)
}

// TestBrowserOrderRefund: the box office, on a phone-sized screen, finds an order by
// email, ticks one of its two tickets and refunds it through the confirmation page
// (the seat stays sold until it is confirmed): the page says so, the ticket shows
// refunded, and the seat is free. The pages are no wider than the screen.
func TestBrowserOrderRefund(t *testing.T) {
	t.Parallel()
	a := newTestApp(t)
	o := a.buyAs(t, "refund-phone@example.com", firstSeats(t, a.Pool, a.EventID, 2)...)
	m := a.addStaff(t, staff.BoxOffice, "Window")
	b := browsertest.New(t)
	ctx := b.NewContext(t)
	browsertest.Do(t, ctx, chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(3), chromedp.EmulateMobile, chromedp.EmulateTouch))
	browsertest.Do(t, ctx,
		chromedp.Navigate(a.URL+"/admin/orders"),
		chromedp.WaitVisible(chromedp.CSS("#password")),
		chromedp.SendKeys(chromedp.CSS("#email"), m.Email),
		chromedp.SendKeys(chromedp.CSS("#password"), staffPassword),
		chromedp.Submit(chromedp.CSS("#password")),
		chromedp.WaitVisible(chromedp.CSS("#q")),
		chromedp.SendKeys(chromedp.CSS("#q"), "refund-phone\r"),
		chromedp.WaitVisible(chromedp.CSS(`#order-results a[href="/admin/orders/`+itoa(o.OrderID)+`"]`)),
	)
	if over := js[float64](t, ctx, `document.documentElement.scrollWidth - window.innerWidth`); over > 1 {
		t.Errorf("search page on a phone: %.0f CSS px wider than the screen", over)
	}
	browsertest.Do(t, ctx,
		chromedp.Click(chromedp.CSS(`#order-results a[href="/admin/orders/`+itoa(o.OrderID)+`"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#ticket-`+itoa(o.Tickets[0].ID))),
	)
	if over := js[float64](t, ctx, `document.documentElement.scrollWidth - window.innerWidth`); over > 1 {
		t.Errorf("order page on a phone: %.0f CSS px wider than the screen", over)
	}
	browsertest.Do(t, ctx,
		chromedp.Click(chromedp.CSS(`label[for=ticket-`+itoa(o.Tickets[0].ID)+`]`)),
		chromedp.Click(chromedp.CSS(`button[value=refund]`)),
		chromedp.WaitVisible(chromedp.CSS(`form[action$="/refund/confirm"] button[type=submit]`)),
	)
	if seatFree(t, a.Pool, a.EventID, o.Tickets[0].SeatID) {
		t.Errorf("the confirmation page freed the seat before the refund was confirmed")
	}
	browsertest.Do(t, ctx,
		chromedp.Click(chromedp.CSS(`form[action$="/refund/confirm"] button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS(`label[for=ticket-`+itoa(o.Tickets[1].ID)+`]`)),
		chromedp.WaitVisible(chromedp.CSS(`.notice[role=status]`)),
	)
	if got := js[string](t, ctx, `document.querySelector(".notice[role=status]").textContent`); !strings.HasPrefix(got, "Refunded") {
		t.Errorf("after the refund: notice %q, want it to say Refunded", got)
	}
	if n := js[float64](t, ctx, `document.querySelectorAll("input[name=ticket]").length`); n != 1 {
		t.Errorf("after the refund: %v tickets offered, want the one left", n)
	}
	if !seatFree(t, a.Pool, a.EventID, o.Tickets[0].SeatID) {
		t.Errorf("the refunded ticket's seat is not free")
	}
	noConsoleErrors(t, ctx)
}
