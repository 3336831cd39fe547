package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"time"
)

// buyer is one browser's session against the shop: its cookies, CSRF token and the
// client address it names in X-Forwarded-For (the host is a trusted proxy of the
// drills' cluster, as a CDN edge would be), so that address limits see buyers apart.
type buyer struct {
	http *http.Client
	base string
	csrf string
	addr string
}

func newBuyer(base string) *buyer {
	jar, _ := cookiejar.New(nil) // New never fails without options
	return &buyer{http: &http.Client{Jar: jar, Timeout: 10 * time.Second}, base: base,
		addr: fmt.Sprintf("10.%d.%d.%d", 100+rand.IntN(100), rand.IntN(256), 1+rand.IntN(254))}
}

// call sends one request and returns the status and body.
func (b *buyer) call(ctx context.Context, method, path string, body any, header map[string]string) (int, []byte, error) {
	var rd io.Reader
	if body != nil {
		j, err := json.Marshal(body)
		if err != nil {
			return 0, nil, err
		}
		rd = bytes.NewReader(j)
	}
	req, err := http.NewRequestWithContext(ctx, method, b.base+path, rd)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Forwarded-For", b.addr)
	if b.csrf != "" {
		req.Header.Set("X-CSRF-Token", b.csrf)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := b.http.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	return resp.StatusCode, out, err
}

// session opens the buyer's session and takes its CSRF token.
func (b *buyer) session(ctx context.Context) error {
	st, body, err := b.call(ctx, http.MethodGet, "/api/v1/session", nil, nil)
	if err != nil {
		return err
	}
	if st != http.StatusOK {
		return fmt.Errorf("GET /api/v1/session: %d %s", st, body)
	}
	var s struct {
		CSRFToken string `json:"csrfToken"`
	}
	if err := json.Unmarshal(body, &s); err != nil {
		return err
	}
	b.csrf = s.CSRFToken
	return nil
}

// cookies are the session's cookies for base, to hand to another process.
func (b *buyer) cookies() []*http.Cookie {
	u, _ := url.Parse(b.base)
	return b.http.Jar.Cookies(u)
}

// rebase points the buyer at another address with the same session cookies.
func (b *buyer) rebase(base string, cookies []*http.Cookie) {
	b.base = base
	u, _ := url.Parse(base)
	b.http.Jar.SetCookies(u, cookies)
}
