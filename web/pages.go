package web

import (
	"github.com/labstack/echo/v4"

	"boxoffice/static"
	"boxoffice/views"
)

// publicPage may be kept by the CDN for a minute. It lists events, which staff change
// and withdraw: no stale-while-revalidate, so that no copy is served past s-maxage
// (docs/CDN.md).
const publicPage = "public, max-age=30, s-maxage=60"

// assets are the hashed URLs every page loads.
var assets = views.Assets{
	CSS:             static.URL("css/app.css"),
	Icon:            static.URL("img/favicon.svg"),
	OrderCSS:        static.URL("css/order.css"),
	PrintCSS:        static.URL("css/print.css"),
	HTMX:            static.URL("js/vendor/htmx-2.0.11.min.js"),
	SSE:             static.URL("js/vendor/htmx-ext-sse-2.2.4.min.js"),
	ResponseTargets: static.URL("js/vendor/htmx-ext-response-targets-2.0.4.min.js"),
}

// countdownScript brings the times a page writes as text to life: a hold's time left
// (seat and checkout pages) and the time to an onsale (event and queue pages).
var countdownScript = static.URL("js/countdown.js")

// page is the frame of a public page: nothing in it is about one buyer.
func page(title string) views.Page {
	return views.Page{Title: title, Assets: assets}
}

// buyerPage is the frame of a page about one buyer: it carries the CSRF token that
// htmx sends with every request the page makes.
func buyerPage(c echo.Context, title string) views.Page {
	p := page(title)
	p.CSRFToken, _ = c.Get(csrfContext).(string)
	return p
}
