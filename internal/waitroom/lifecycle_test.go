package waitroom

import (
	"testing"
	"time"

	"boxoffice/internal/dbtest"
)

// The admission's lifecycle: it ends early when its shopper leaves (bought,
// released), and lasts as long as the hold made with it.

// ended asks whether the admission whose token ends at exp has ended.
func ended(t *testing.T, r *Room, eventID int64, v string, exp time.Time) bool {
	t.Helper()
	e, err := r.Ended(t.Context(), eventID, v, exp)
	if err != nil {
		t.Fatalf("Ended(%s): %v", v, err)
	}
	return e
}

// TestLeaveEndsAdmission: once a shopper leaves, the tokens of that admission are
// ended, whatever their signature says, while another shopper's are not; joining
// again admits anew, with an admission that ends after the one that ended, so that
// the new token is not ended though the old ones stay so, even when the old
// admission had been extended past the new one's lifetime.
func TestLeaveEndsAdmission(t *testing.T) {
	t.Parallel()
	rdb, prefix := dbtest.Redis(t)
	r := newRoom(t, rdb, prefix, Hooks{}, Options{})
	ev := open(1, Settings{Slots: 5, Rate: 10, TokenTTL: time.Minute})
	first, other := join(t, r, ev, "a"), join(t, r, ev, "b")
	if !first.Admitted || !other.Admitted {
		t.Fatalf("joining: got %+v and %+v, want both admitted", first, other)
	}
	if ended(t, r, ev.ID, "a", first.ExpiresAt) {
		t.Fatal("a running admission: got ended, want not")
	}
	// The hold made with it lasts ten minutes: so does the admission, and the queue
	// hands out a token lasting as long.
	if err := r.Extend(t.Context(), ev.ID, "a", time.Now().Add(10*time.Minute)); err != nil {
		t.Fatal(err)
	}
	extended := status(t, r, ev, "a")
	if !extended.ExpiresAt.After(first.ExpiresAt.Add(8 * time.Minute)) {
		t.Fatalf("after Extend: admission ends %v, want about ten minutes from now", extended.ExpiresAt)
	}
	if _, err := r.Verify(extended.Token, ev.ID, "a"); err != nil {
		t.Fatalf("the extended admission's token: %v", err)
	}
	if err := r.Leave(t.Context(), ev.ID, "a"); err != nil {
		t.Fatal(err)
	}
	for name, exp := range map[string]time.Time{"first": first.ExpiresAt, "extended": extended.ExpiresAt} {
		if !ended(t, r, ev.ID, "a", exp) {
			t.Errorf("the %s token after Leave: got not ended, want ended", name)
		}
	}
	if ended(t, r, ev.ID, "b", other.ExpiresAt) {
		t.Error("another shopper's admission after a left: got ended, want not")
	}
	again := join(t, r, ev, "a")
	if !again.Admitted {
		t.Fatalf("joining again: got %+v, want admitted anew", again)
	}
	if ended(t, r, ev.ID, "a", again.ExpiresAt) {
		t.Errorf("the new admission (ending %v, the ended one %v): got ended, want not", again.ExpiresAt, extended.ExpiresAt)
	}
	if !ended(t, r, ev.ID, "a", extended.ExpiresAt) {
		t.Error("the ended admission's token after joining again: got not ended, want ended")
	}
}

// TestExtendKeepsSlot: an admission extended to its hold's end keeps its slot after
// its token's end: the next arrival waits. The same without the extension, in
// another event, lets the next arrival straight in (the control: the slot does come
// back when an admission lapses).
func TestExtendKeepsSlot(t *testing.T) {
	t.Parallel()
	rdb, prefix := dbtest.Redis(t)
	r := newRoom(t, rdb, prefix, Hooks{}, Options{})
	held := open(1, Settings{Slots: 1, Rate: 10, TokenTTL: time.Second})
	lapsed := open(2, Settings{Slots: 1, Rate: 10, TokenTTL: time.Second})
	var ends []time.Time
	for _, ev := range []Event{held, lapsed} {
		st := join(t, r, ev, "a")
		if !st.Admitted {
			t.Fatalf("Join(a) to event %d: got %+v, want admitted", ev.ID, st)
		}
		ends = append(ends, st.ExpiresAt)
	}
	if err := r.Extend(t.Context(), held.ID, "a", time.Now().Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	last := ends[0]
	if ends[1].After(last) {
		last = ends[1]
	}
	eventually(t, "the tokens' end passed on Redis's clock", wait, func() bool { return redisNow(t, rdb).After(last) })
	if st := join(t, r, lapsed, "b"); !st.Admitted {
		t.Errorf("control, no extension: b got %+v, want admitted to the slot a's lapse gave back", st)
	}
	if st := join(t, r, held, "b"); st.Admitted || !st.Queued {
		t.Errorf("b with a's admission extended to its hold: got %+v, want queued", st)
	}
	if st := status(t, r, held, "a"); !st.Admitted || !st.ExpiresAt.After(last) {
		t.Errorf("a after its token's end: got %+v, want still admitted, past %v", st, last)
	}
}
