package metrics

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"boxoffice/internal/groupcommit"
)

// TestRegistriesApart: two programs in one process (tests) count into registries of
// their own, and neither touches Prometheus's global default.
func TestRegistriesApart(t *testing.T) {
	t.Parallel()
	a, b := New(), New()
	a.HoldCreated()
	a.OrderConfirmed(3)
	b.HoldConflict()
	for _, tc := range []struct {
		m    *Metrics
		want []string
	}{
		{a, []string{"boxoffice_holds_total 1", "boxoffice_hold_conflicts_total 0", "boxoffice_orders_confirmed_total 1", "boxoffice_tickets_issued_total 3"}},
		{b, []string{"boxoffice_holds_total 0", "boxoffice_hold_conflicts_total 1", "boxoffice_orders_confirmed_total 0"}},
	} {
		text := scrape(t, tc.m)
		for _, w := range tc.want {
			if !strings.Contains(text, "\n"+w+"\n") {
				t.Errorf("got no line %q in\n%s", w, text)
			}
		}
	}
}

// TestQueueCollectorKeepsWhatItRead: a waiting room that cannot be read leaves its own
// series out, never the scrape: the pools' figures matter most when Redis is in trouble.
func TestQueueCollectorKeepsWhatItRead(t *testing.T) {
	t.Parallel()
	m := New()
	err := m.Watch(Sources{
		SSEClients: func() int { return 4 },
		Queues: func(context.Context) ([]Queue, error) {
			return []Queue{{EventID: 9, Waiting: 120, Active: 50, Rate: 2.5, Limit: 1.875},
				{EventID: 11, Presale: true, Waiting: 6, Active: 3}}, errors.New("event 10: redis unavailable")
		},
		Load:   func() float64 { return 1.5 },
		DBGate: func() (int, int, int) { return 2, 5, 11 },
		SmallWrites: func() map[string]groupcommit.Stats {
			return map[string]groupcommit.Stats{"session": {Calls: 500, Batches: 40, Waiting: 3}, "key_claim": {Calls: 7, Batches: 7}}
		},
		Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	m.QueueAdmitted(9, 7)
	m.QueueLapsed(9, 3, 2)
	m.QueueLapsed(9, 1, 0)
	text := scrape(t, m)
	for _, w := range []string{
		`boxoffice_queue_length{event="9"} 120`, `boxoffice_queue_active{event="9"} 50`,
		`boxoffice_queue_admission_rate{event="9"} 2.5`, `boxoffice_queue_admitted_total{event="9"} 7`,
		`boxoffice_queue_lapsed_total{event="9"} 4`, `boxoffice_queue_reused_total{event="9"} 2`,
		`boxoffice_queue_admission_limit{event="9"} 1.875`, "boxoffice_latency_level 1.5",
		"boxoffice_sse_clients 4",
		`boxoffice_db_gate_waiting{place="first"} 2`, `boxoffice_db_gate_waiting{place="usual"} 5`,
		`boxoffice_db_gate_waiting{place="later"} 11`,
		`boxoffice_small_writes_total{kind="session"} 500`, `boxoffice_small_write_batches_total{kind="session"} 40`,
		`boxoffice_small_writes_waiting{kind="session"} 3`, `boxoffice_small_writes_total{kind="key_claim"} 7`,
		`boxoffice_presale_queue_length{event="11"} 6`, `boxoffice_presale_queue_active{event="11"} 3`,
	} {
		if !strings.Contains(text, "\n"+w+"\n") {
			t.Errorf("got no line %q in\n%s", w, text)
		}
	}
	if strings.Contains(text, `event="10"`) {
		t.Errorf("got series of the room that was not read:\n%s", text)
	}
	if strings.Contains(text, `boxoffice_queue_length{event="11"}`) {
		t.Errorf("a presale's room reported as its event's public room:\n%s", text)
	}
}

func scrape(t *testing.T, m *Metrics) string {
	t.Helper()
	srv := httptest.NewServer(m.ServeMux())
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics: got %d %s, want 200", resp.StatusCode, body)
	}
	return string(body)
}
