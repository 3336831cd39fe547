package booking

import (
	"testing"
	"time"
)

// TestQueuedPresales: the admitter works on an event's presale room while the event's
// room is on, the public onsale has not come, and a code not paused opens within the
// hour and has not ended; the room is the event's negated id, drawn at the earliest
// such code's start, with the event's settings.
func TestQueuedPresales(t *testing.T) {
	t.Parallel()
	later := saleState{"before an onsale in three hours", `onsale_at = now() + interval '3 hours', sales_close_at = NULL`}
	for _, tt := range []struct {
		name   string
		room   bool
		sale   saleState
		window string // "" no code
		paused bool
		listed bool
	}{
		{"open", true, later, presaleOpen, false, true},
		{"soon", true, later, presaleLater, false, true},
		{"later than the hour", true, later, "now() + interval '70 minutes', now() + interval '80 minutes'", false, false},
		{"over", true, later, presaleOver, false, false},
		{"paused", true, later, presaleOpen, true, false},
		{"no code", true, later, "", false, false},
		{"room off", false, later, presaleOpen, false, false},
		{"after the onsale", true, saleOpen, presaleOpen, false, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, windowSpec(), DefaultConfig())
			f.setSale(t, tt.sale)
			if _, err := f.pool.Exec(t.Context(), `UPDATE events SET queue_enabled = $2, queue_slots = 7, queue_rate = 3 WHERE id = $1`,
				f.event, tt.room); err != nil {
				t.Fatal(err)
			}
			if tt.window != "" {
				f.accessCode(t, f.event, "FIRST", 0, tt.window, tt.paused)
			}
			if tt.listed { // a later code: the draw is still the earliest start
				f.accessCode(t, f.event, "SECOND", 0, "now() + interval '20 minutes', now() + interval '55 minutes'", false)
			}
			rooms, err := f.svc.Buyer.QueuedPresales(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			if got := len(rooms) == 1; got != tt.listed {
				t.Fatalf("got %d presale rooms %+v, want listed %v", len(rooms), rooms, tt.listed)
			}
			if !tt.listed {
				return
			}
			r := rooms[0]
			if id, presale := RoomEvent(r.ID); r.ID != PresaleRoomID(f.event) || id != f.event || !presale || r.ID >= 0 {
				t.Errorf("room id: got %d (event %d, presale %v), want the presale's of event %d", r.ID, id, presale, f.event)
			}
			first := time.Unix(int64(f.count(t, `SELECT extract(epoch FROM min(presale_starts_at))::int FROM access_codes WHERE event_id = $1`, f.event)), 0)
			if d := r.OnsaleAt.Sub(first); d < -time.Second || d > time.Second {
				t.Errorf("the draw: got %v, want the earliest code's start %v", r.OnsaleAt, first)
			}
			if !r.Settings.Enabled || r.Settings.Slots != 7 || r.Settings.Rate != 3 {
				t.Errorf("settings: got %+v, want the event's (on, 7 slots, 3/s)", r.Settings)
			}
		})
	}
}

// TestPresaleStock: the presale room's stock is what its codes' quotas still allow,
// no more than the event has; a code without a quota leaves the event's stock.
func TestPresaleStock(t *testing.T) {
	t.Parallel()
	event := StockLevel{Unsold: 100, Free: 80}
	for _, tt := range []struct {
		name  string
		codes []PresaleCode
		want  StockLevel
	}{
		{"untouched", []PresaleCode{{Quota: 10}}, StockLevel{10, 10}},
		{"some held", []PresaleCode{{Quota: 10, Held: 4}}, StockLevel{10, 6}},
		{"some bought", []PresaleCode{{Quota: 10, Used: 4, Held: 4}}, StockLevel{6, 6}},
		{"all bought", []PresaleCode{{Quota: 10, Used: 10, Held: 10}}, StockLevel{0, 0}},
		{"all held, none bought", []PresaleCode{{Quota: 10, Held: 10}}, StockLevel{10, 0}},
		{"two codes", []PresaleCode{{Quota: 10, Used: 10}, {Quota: 5, Held: 2}}, StockLevel{5, 3}},
		{"a code without a quota", []PresaleCode{{Quota: 10, Used: 10}, {}}, event},
		{"more quota than seats", []PresaleCode{{Quota: 500}}, event},
		{"no codes", nil, StockLevel{0, 0}},
	} {
		if got := presaleStock(event, Presale{Codes: tt.codes}); got != tt.want {
			t.Errorf("%s: got %+v, want %+v", tt.name, got, tt.want)
		}
	}
}
