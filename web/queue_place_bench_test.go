package web_test

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"boxoffice/internal/apptest"
)

// BenchmarkPlaceArrival is what the origin does for one arrival at the front door, in
// process, without a network or a client: the place call's GET (a CSRF token), then
// its POST (a signed place), through the program's whole handler and its middleware,
// logging as in production (JSON at info level, thrown away). Its allocations an
// arrival are the steady figure to compare; its time depends on the machine's load.
// bench arrive (cmd/bench) measures arrivals over HTTP against a minimal server.
func BenchmarkPlaceArrival(b *testing.B) {
	p := apptest.New(b, apptest.Options{Log: slog.New(slog.NewJSONHandler(io.Discard, nil))})
	roomOn(b, &testApp{Pool: p.Pool}, p.EventID, 2000, 128, time.Minute)
	if _, err := p.Pool.Exec(b.Context(), `UPDATE events SET onsale_at = now() + interval '1 hour' WHERE id = $1`, p.EventID); err != nil {
		b.Fatal(err)
	}
	path := placePath(p.EventID)
	for b.Loop() {
		get := httptest.NewRecorder()
		p.Handler.ServeHTTP(get, httptest.NewRequest(http.MethodGet, path, nil))
		ck := get.Result().Cookies()
		if get.Code != http.StatusOK || len(ck) != 1 {
			b.Fatalf("GET place: %d, cookies %v", get.Code, ck)
		}
		req := httptest.NewRequest(http.MethodPost, path, nil)
		req.Header.Set("X-CSRF-Token", ck[0].Value)
		req.AddCookie(ck[0])
		post := httptest.NewRecorder()
		p.Handler.ServeHTTP(post, req)
		if post.Code != http.StatusOK || !strings.Contains(post.Body.String(), `"placed":true`) {
			b.Fatalf("POST place: %d %s", post.Code, post.Body)
		}
	}
}
