package cdn_test

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"boxoffice/deploy/cdn"
)

// TestBalancesAcrossOrigins: with several origins (the load balancer of
// deploy/cluster), requests go to each live one, and an origin that refuses
// connections is skipped: every request is answered.
func TestBalancesAcrossOrigins(t *testing.T) {
	t.Parallel()
	requireNginx(t)
	var origins []string
	for _, name := range []string{"a", "b"} {
		o := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Cache-Control", "private, no-store")
			_, _ = io.WriteString(w, name)
		}))
		t.Cleanup(o.Close)
		origins = append(origins, strings.TrimPrefix(o.URL, "http://"))
	}
	// An address nobody listens on: an instance that is gone.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gone := ln.Addr().String()
	ln.Close()
	origins = append(origins, gone)

	p, err := cdn.Start(t.Context(), cdn.Config{Origins: origins, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	seen := map[string]int{}
	for range 12 {
		resp, err := http.Get(p.URL + "/api/v1/holds/x")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("through the balancer: got %d %q, want 200 from a live origin", resp.StatusCode, body)
		}
		seen[string(body)]++
	}
	if seen["a"] == 0 || seen["b"] == 0 {
		t.Fatalf("answers by origin: got %v, want both live origins to answer some", seen)
	}
}
