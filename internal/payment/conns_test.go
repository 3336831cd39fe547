package payment

import (
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"
)

// TestDeliveriesReuseConnections sends four waves of webhooks, each wave's
// deliveries held at the receiver until all of them are in, so that a wave needs
// as many connections at once as it has deliveries. The later waves must find the
// first wave's connections open. Go's default transport keeps only 2 idle
// connections a host, so a provider built on it (the negative control,
// Config.Client with http.DefaultTransport) dials at least n-2 anew every wave. A
// connection goes back to its pool a moment after its delivery has returned, so a
// wave that starts at once may miss one now and then: the provider's own client
// must dial at most n/2 in the three later waves together, against at least
// 3(n-2) for the default transport.
func TestDeliveriesReuseConnections(t *testing.T) {
	t.Parallel()
	const n = 8
	for _, tc := range []struct {
		name    string
		client  *http.Client
		wantNew func(int64) bool
		want    string
	}{
		{"own client", nil, func(c int64) bool { return c <= n/2 }, "at most n/2"},
		{"default transport (negative control)", &http.Client{Timeout: 10 * time.Second},
			func(c int64) bool { return c >= 3*(n-2) }, "at least 3(n-2)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var conns atomic.Int64
			arrived := make(chan struct{}, n)
			release := make(chan struct{})
			srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				arrived <- struct{}{}
				select {
				case <-release:
				case <-time.After(wait):
				}
				w.WriteHeader(http.StatusOK)
			}))
			srv.Config.ConnState = func(_ net.Conn, st http.ConnState) {
				if st == http.StateNew {
					conns.Add(1)
				}
			}
			srv.Start()
			t.Cleanup(srv.Close)
			log, msgs := logTo(t)
			p := newProvider(t, nil, Config{WebhookURL: srv.URL, Client: tc.client, Logger: log})

			wave := func() {
				t.Helper()
				for range n {
					if _, err := charge(t, p, cardOK, DeliverNormal); err != nil {
						t.Fatalf("Charge: got %v, want nil", err)
					}
				}
				for range n {
					select {
					case <-arrived:
					case <-time.After(wait):
						t.Fatalf("got fewer than %d deliveries at once within %v", n, wait)
					}
				}
				for range n {
					release <- struct{}{}
				}
				for range n {
					if msg := nextWebhookLog(t, msgs); msg != "payment: webhook delivered" {
						t.Fatalf("got %q, want every delivery delivered", msg)
					}
				}
			}
			wave()
			if got := conns.Load(); got != n {
				t.Fatalf("first wave: got %d connections, want %d (one a delivery held at once)", got, n)
			}
			for range 3 {
				wave()
			}
			if got := conns.Load() - n; !tc.wantNew(got) {
				t.Errorf("later waves: got %d new connections, want %s (n = %d)", got, tc.want, n)
			}
		})
	}
}
