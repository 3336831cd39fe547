package web_test

import (
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/emulation"
	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"boxoffice/internal/browsertest"
	"boxoffice/internal/staff"
)

// staffLoginAt logs the tab in as a new member with role, through the login form, and
// leaves it on path.
func staffLoginAt(t *testing.T, ctx context.Context, a *testApp, role staff.Role, path string) staff.Member {
	t.Helper()
	m := a.addStaff(t, role, "Box "+role.Label())
	browsertest.Do(t, ctx,
		chromedp.Navigate(a.URL+path),
		chromedp.WaitVisible(chromedp.CSS("form.login")),
		chromedp.SendKeys(chromedp.CSS("#email"), m.Email),
		chromedp.SendKeys(chromedp.CSS("#password"), staffPassword),
	)
	browsertest.Follow(t, ctx, "login", chromedp.Click(chromedp.CSS("form.login button[type=submit]")), path)
	return m
}

// pdfPages counts the pages of a PDF by its page objects.
var pdfPage = regexp.MustCompile(`/Type\s*/Page\b`)

// TestBrowserBoxOfficeSale: at the box office, a member ticks two seats on the staff
// seat map, enters the buyer's name, chooses card and sells; the browser lands on the
// tickets, two with QR codes, which print one to a sheet with nothing of the page
// around them. A buyer watching the same event's map sees the two seats sold, live.
func TestBrowserBoxOfficeSale(t *testing.T) {
	t.Parallel()
	app := newTestApp(t)
	b := browsertest.New(t)
	ctx, watcher := b.NewContext(t), b.NewContext(t)
	path := "/admin/events/" + itoa(app.EventID) + "/sell"
	staffLoginAt(t, ctx, app, staff.BoxOffice, path)
	browsertest.Do(t, ctx, chromedp.WaitVisible(chromedp.CSS("#seat-form")))
	waitJS(t, ctx, "the page's scripts", `document.documentElement.classList.contains("js") && typeof htmx === "object"`, browsertest.Timeout)
	waitJS(t, ctx, "the staff map's live stream to open", streamOpen, browsertest.Timeout)
	seatPage(t, watcher, app.URL, true)
	waitJS(t, watcher, "the buyer's live stream to open", streamOpen, browsertest.Timeout)

	seats := js[[]string](t, ctx, `Array.from(document.querySelectorAll(".map .seat.avail input[name=seat]")).slice(0, 2).map(i => i.closest(".seat").id)`)
	if len(seats) != 2 {
		t.Fatalf("available seats on the staff map: %v", seats)
	}
	for _, s := range seats {
		browsertest.Do(t, ctx, chromedp.Click(chromedp.CSS("#"+s+" input")))
	}
	ticked := js[[]string](t, ctx, `Array.from(document.querySelectorAll(".map .seat input:checked")).map(i => i.closest(".seat").id)`)
	if strings.Join(ticked, " ") != strings.Join(seats, " ") {
		t.Fatalf("ticked seats: %v, want %v (a tick only picks on the staff map)", ticked, seats)
	}
	if held := seatClass(t, ctx, seats[0]); !strings.Contains(held, "avail") {
		t.Errorf("a ticked seat on the staff map: class %q, want still available until sold", held)
	}
	browsertest.Do(t, ctx,
		chromedp.SendKeys(chromedp.CSS("#sale-name"), "Grace Hopper"),
		chromedp.Click(chromedp.CSS(`input[name=method][value=card_present]`)),
	)
	browsertest.Follow(t, ctx, "selling", chromedp.Click(chromedp.CSS(`.sale-panel button[type=submit]`)), "/sales/")
	waitJS(t, ctx, "the tickets with QR codes", `document.querySelectorAll(".tickets .ticket svg.qr path[d]").length === 2`, browsertest.Timeout)
	summary := browsertest.Run(t, ctx, chromedp.Text(chromedp.CSS(".order-summary")))
	if !strings.Contains(summary, "Paid by card") || !strings.Contains(summary, "Grace Hopper") {
		t.Errorf("the sale's summary: %q, want card and the buyer's name", summary)
	}
	for _, s := range seats {
		waitJS(t, watcher, "the buyer's map to show "+s+" sold", hasClass(s, "sold"), browsertest.Timeout)
	}

	// Printed: the tickets alone, one to a sheet.
	if _, err := chromedp.Call(ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{Media: "print"}); err != nil {
		t.Fatalf("print media: %v", err)
	}
	hidden := js[bool](t, ctx, `["nav.admin-nav", ".order-summary", "button[data-print]", "h1"].every(s => getComputedStyle(document.querySelector(s)).display === "none")`)
	if !hidden {
		t.Error("printed, the page shows more than the tickets (menu, summary, button or heading)")
	}
	pdf, err := chromedp.Call(ctx, cdppage.PrintToPDF, cdppage.PrintToPDFParams{})
	if err != nil {
		t.Fatalf("print to PDF: %v", err)
	}
	if n := len(pdfPage.FindAll(pdf.Data, -1)); n != 2 {
		t.Errorf("printed tickets: %d pages, want 2 (one ticket to a sheet)", n)
	}
	if n := count(t, app.Pool, `SELECT count(*) FROM tickets t JOIN box_office_sales b ON b.order_id = t.order_id WHERE t.event_id = $1`, app.EventID); n != 2 {
		t.Errorf("tickets of box-office sales: %d, want 2", n)
	}
	noConsoleErrors(t, ctx, watcher)
}

// TestBrowserStaffMapPhone: on a phone-sized screen the staff map and a sale's tickets
// are no wider than the screen (the map scrolls in its own box), and their buttons and
// choices are at least 44 CSS pixels tall.
func TestBrowserStaffMapPhone(t *testing.T) {
	t.Parallel()
	app := newTestApp(t)
	b := browsertest.New(t)
	ctx := b.NewContext(t)
	browsertest.Do(t, ctx, chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(3), chromedp.EmulateMobile, chromedp.EmulateTouch))
	path := "/admin/events/" + itoa(app.EventID) + "/sell"
	staffLoginAt(t, ctx, app, staff.Admin, path)
	// A staff hold, so that its release button is on the page too.
	seat := js[string](t, ctx, `document.querySelector(".map .seat.avail input[name=seat]").value`)
	if seat == "" {
		t.Fatal("no available seat")
	}
	browsertest.Do(t, ctx,
		chromedp.Click(chromedp.CSS(`.map .seat.avail input[value="`+seat+`"]`)),
		chromedp.SendKeys(chromedp.CSS("#hold-reason"), "Camera position"),
	)
	browsertest.Follow(t, ctx, "staff hold", chromedp.Click(chromedp.CSS(`.staff-hold-panel button[type=submit]`)), "")
	browsertest.Do(t, ctx, chromedp.WaitVisible(chromedp.CSS("#staff-holds li")))
	if over := js[float64](t, ctx, `document.documentElement.scrollWidth - window.innerWidth`); over > 1 {
		t.Errorf("staff map on a phone: %.0f CSS px wider than the screen", over)
	}
	small := js[[]string](t, ctx, `Array.from(document.querySelectorAll(".seat-side button, .seat-side input:not([type=hidden]):not([type=radio]), .seat-side select, .staff-sell fieldset.choices label, #staff-holds button"))
		.filter(e => e.getBoundingClientRect().height < 44).map(e => e.outerHTML.slice(0, 80))`)
	if len(small) > 0 {
		t.Errorf("targets under 44 CSS px tall on a phone: %q", small)
	}

	// A sale from the phone: its tickets fit the screen too.
	browsertest.Do(t, ctx, chromedp.Click(chromedp.CSS(`.map .seat.avail input[name=seat]`)))
	browsertest.Follow(t, ctx, "sale on a phone", chromedp.Click(chromedp.CSS(`.sale-panel button[type=submit]`)), "/sales/")
	if over := js[float64](t, ctx, `document.documentElement.scrollWidth - window.innerWidth`); over > 1 {
		t.Errorf("tickets on a phone: %.0f CSS px wider than the screen", over)
	}
	if h := js[float64](t, ctx, `document.querySelector("button[data-print]").getBoundingClientRect().height`); h < 44 {
		t.Errorf("the print button on a phone: %.0f CSS px tall, want 44", h)
	}
	noConsoleErrors(t, ctx)
}

// TestBrowserBoxOfficeKeyboard: with the keyboard alone (Tab into the map, an arrow to a
// seat, Space to tick it, Tab on to the sale button, Enter), a member sells a seat.
func TestBrowserBoxOfficeKeyboard(t *testing.T) {
	t.Parallel()
	app := newTestApp(t)
	b := browsertest.New(t)
	ctx := b.NewContext(t)
	staffLoginAt(t, ctx, app, staff.BoxOffice, "/admin/events/"+itoa(app.EventID)+"/sell")
	waitJS(t, ctx, "the page's scripts", `document.documentElement.classList.contains("js") && typeof htmx === "object"`, browsertest.Timeout)

	tabUntil := func(what, cond string) {
		t.Helper()
		for i := 0; !js[bool](t, ctx, cond); i++ {
			if i == 80 {
				t.Fatalf("80 presses of Tab never reached %s; focus is on %s", what,
					js[string](t, ctx, `document.activeElement ? document.activeElement.outerHTML.slice(0, 120) : "nothing"`))
			}
			browsertest.Do(t, ctx, chromedp.KeyEvent(kb.Tab))
		}
	}
	tabUntil("the seat map", `!!(document.activeElement && document.activeElement.closest && document.activeElement.closest(".map .seat"))`)
	browsertest.Do(t, ctx, chromedp.KeyEvent(kb.ArrowRight))
	seat := js[string](t, ctx, `document.activeElement.closest(".seat").id`)
	browsertest.Do(t, ctx, chromedp.KeyEvent(" "))
	if !js[bool](t, ctx, `document.activeElement.checked`) {
		t.Fatalf("Space on %s did not tick it", seat)
	}
	tabUntil("the sale button", `document.activeElement && document.activeElement.matches(".sale-panel button[type=submit]")`)
	browsertest.Follow(t, ctx, "Enter on the sale button", chromedp.KeyEvent(kb.Enter), "/sales/")
	seatID := strings.TrimPrefix(seat, "seat-")
	if n := count(t, app.Pool, `SELECT count(*) FROM seats WHERE event_id = $1 AND id = $2::bigint AND sold_at IS NOT NULL`, app.EventID, seatID); n != 1 {
		t.Errorf("seat %s sold: %d, want 1", seat, n)
	}
	noConsoleErrors(t, ctx)
}
