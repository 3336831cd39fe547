package latency

import (
	"testing"
	"time"
)

// clock is a Meter's clock that the test moves.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func meter(bound time.Duration) (*Meter, *clock) {
	c := &clock{t: time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)}
	m := New(bound)
	m.now = c.now
	return m, c
}

func TestLevelIsTheTailOverTheBound(t *testing.T) {
	m, _ := meter(100 * time.Millisecond)
	// 100 steps: 94 of 10 ms and 6 of 400 ms. The 95th is 400 ms: four times the bound.
	for i := range 100 {
		d := 10 * time.Millisecond
		if i%16 == 0 && i < 96 {
			d = 400 * time.Millisecond
		}
		m.Step(d)
	}
	if got := m.Level(); got != 4 {
		t.Errorf("6 slow steps in 100: level %v, want 4 (the 95th percentile, 400 ms, over 100 ms)", got)
	}

	m, _ = meter(100 * time.Millisecond)
	for i := range 100 {
		d := 10 * time.Millisecond
		if i < 4 {
			d = 400 * time.Millisecond
		}
		m.Step(d)
	}
	if got := m.Level(); got != 0.1 {
		t.Errorf("4 slow steps in 100: level %v, want 0.1 (the 95th is 10 ms)", got)
	}
}

func TestLevelForgetsOldSamples(t *testing.T) {
	m, c := meter(100 * time.Millisecond)
	for range 50 {
		m.Step(time.Second)
	}
	if got := m.Level(); got != 10 {
		t.Fatalf("level %v, want 10", got)
	}
	c.t = c.t.Add(Window)
	if got := m.Level(); got != 0 {
		t.Errorf("a window later: level %v, want 0 (nothing measured since)", got)
	}
	for range 50 {
		m.Step(50 * time.Millisecond)
	}
	if got := m.Level(); got != 0.5 {
		t.Errorf("after new fast steps: level %v, want 0.5", got)
	}
}

func TestLevelNeedsEnoughSamples(t *testing.T) {
	m, _ := meter(100 * time.Millisecond)
	for range minSamples - 1 {
		m.Step(time.Second)
	}
	if got := m.Level(); got != 0 {
		t.Errorf("%d slow steps: level %v, want 0 (too few to tell)", minSamples-1, got)
	}
	m.Step(time.Second)
	if got := m.Level(); got != 10 {
		t.Errorf("%d slow steps: level %v, want 10", minSamples, got)
	}
}

func TestRingKeepsTheLatest(t *testing.T) {
	m, _ := meter(100 * time.Millisecond)
	for range ringSize {
		m.Step(time.Second)
	}
	for range ringSize {
		m.Step(10 * time.Millisecond)
	}
	if got := m.Level(); got != 0.1 {
		t.Errorf("a full ring of fast steps after slow ones: level %v, want 0.1", got)
	}
}

func TestNilMeter(t *testing.T) {
	var m *Meter
	m.Step(time.Second)
	if m.Level() != 0 || m.Seen() != 0 {
		t.Error("a nil Meter reads as no load")
	}
}

// TestNoBound: without a latency bound (LATENCY_BOUND=off) the level is always 0, slow
// steps or not, but a sale is still seen (EMAIL_SALE_RATE reads Active).
func TestNoBound(t *testing.T) {
	for _, bound := range []time.Duration{0, -time.Second} {
		m := New(bound)
		for range minSamples {
			m.Step(time.Hour)
		}
		if m.Level() != 0 {
			t.Errorf("bound %v: level %v, want 0", bound, m.Level())
		}
		if !m.Active() || m.Seen() != minSamples {
			t.Errorf("bound %v: active %v, seen %d; want on, %d", bound, m.Active(), m.Seen(), minSamples)
		}
	}
}

// TestActive: a sale is on with minSamples steps in the window, fast or slow, and off
// once they are a window old; a nil Meter is never on.
func TestActive(t *testing.T) {
	m, c := meter(100 * time.Millisecond)
	for range minSamples - 1 {
		m.Step(time.Millisecond)
	}
	if m.Active() {
		t.Errorf("%d steps: on, want off (a quiet day's)", minSamples-1)
	}
	m.Step(time.Millisecond)
	if !m.Active() || m.Level() != 0.01 {
		t.Errorf("%d fast steps: on %v, level %v; want on at level 0.01", minSamples, m.Active(), m.Level())
	}
	c.t = c.t.Add(Window)
	if m.Active() {
		t.Errorf("a window later: on, want off")
	}
	var none *Meter
	if none.Active() {
		t.Error("a nil Meter: on, want off")
	}
}
