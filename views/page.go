package views

import "encoding/json"

// Assets are the hashed URLs of the files every page loads.
type Assets struct {
	CSS             string
	Icon            string
	OrderCSS        string // checkout, order and ticket pages, error fragments
	PrintCSS        string
	HTMX            string
	SSE             string
	ResponseTargets string
}

// Page is what every page needs from its handler.
type Page struct {
	Title       string
	Description string
	Assets      Assets
	Scripts     []string // further scripts of this page, hashed URLs under /static
	Styles      []string // further stylesheets of this page, hashed URLs under /static
	// Refresh, if set, is the content of a meta refresh for browsers without
	// JavaScript ("5"), on pages that otherwise update themselves with htmx.
	Refresh string
	// CSRFToken is set on pages about one buyer only (never on a public, cacheable
	// page); htmx sends it on every request the page makes.
	CSRFToken string
	// Private marks a page about one order: search engines are asked not to index it,
	// and it sends no Referer (its address may carry the order's access token).
	Private bool
}

// htmxConfig keeps htmx within a strict Content-Security-Policy: no <style> element of
// its own (the indicator styles are in app.css), no eval, no inline scripts.
const htmxConfig = `{"includeIndicatorStyles":false,"allowEval":false,"allowScriptTags":false,"selfRequestsOnly":true,"historyCacheSize":0}`

// csrfHeaders is the hx-headers value that carries the CSRF token.
func csrfHeaders(token string) string {
	b, _ := json.Marshal(map[string]string{"X-CSRF-Token": token}) // a string map always encodes
	return string(b)
}
