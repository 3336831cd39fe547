package waitroom

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"boxoffice/internal/dbtest"
)

// eventsOnEveryNode returns one event id per primary of the cluster, each event's keys
// on that primary's slots, so that a test touches every node.
func eventsOnEveryNode(t *testing.T, rdb *redis.ClusterClient, prefix string, nodes int) []int64 {
	t.Helper()
	seen := map[string]bool{}
	var ids []int64
	for id := int64(1); len(ids) < nodes && id < 1000; id++ {
		node, err := rdb.MasterForKey(t.Context(), eventKeys(prefix, id)[keyQueue])
		if err != nil {
			t.Fatalf("the primary of event %d: %v", id, err)
		}
		if addr := node.Options().Addr; !seen[addr] {
			seen[addr] = true
			ids = append(ids, id)
		}
	}
	if len(ids) < nodes {
		t.Fatalf("got events on %d primaries, want %d", len(ids), nodes)
	}
	return ids
}

// TestRoomOnRedisCluster: on a three-primary Redis Cluster, with one event on each
// primary, every script of the room runs (each touches one event's keys, one slot):
// a join with a free slot admits at once, the next one queues, the counts, the board
// and EndOf read, and once the shopper leaves the admitter of one of two instances
// lets the next one in. The lease (a key of its own, on some node) leaves one instance
// admitting for all three events.
func TestRoomOnRedisCluster(t *testing.T) {
	t.Parallel()
	c := dbtest.StartRedisCluster(t)
	rdb, prefix := c.Client(t), "test:"
	ids := eventsOnEveryNode(t, rdb, prefix, len(c.Nodes))
	var evs []Event
	for _, id := range ids {
		evs = append(evs, open(id, Settings{Slots: 1, Rate: 50, TokenTTL: time.Minute}))
	}
	opt := Options{Tick: 20 * time.Millisecond}
	a := newRoom(t, rdb, prefix, Hooks{Events: events(evs...)}, opt)
	b := newRoom(t, rdb, prefix, Hooks{Events: events(evs...)}, opt)
	rec := &admissions{}
	a.onAdmit, b.onAdmit = rec.hook("a"), rec.hook("b")
	for _, ev := range evs {
		if st := join(t, a, ev, "first"); !st.Admitted || st.Token == "" {
			t.Fatalf("event %d: Join(first) got %+v, want admitted with a token", ev.ID, st)
		}
		if st := join(t, b, ev, "second"); st.Admitted || st.Position != 1 {
			t.Fatalf("event %d: Join(second) got %+v, want queued first", ev.ID, st)
		}
		if cn, err := a.Counts(t.Context(), ev.ID); err != nil || cn.Waiting != 1 || cn.Active != 1 {
			t.Errorf("event %d: Counts got %+v, %v; want 1 waiting, 1 active", ev.ID, cn, err)
		}
		if bd, err := b.Board(t.Context(), ev); err != nil || bd.Waiting != 1 {
			t.Errorf("event %d: Board got %+v, %v; want 1 waiting", ev.ID, bd, err)
		}
	}
	// Negative control: the cluster refuses a script over two events' keys, so the
	// calls above passed because each keeps to one slot.
	k1, k2 := eventKeys(prefix, ids[0]), eventKeys(prefix, ids[1])
	if _, err := countsScript.Run(t.Context(), rdb, []string{k1[keyQueue], k2[keyAdmitted], k1[keyState]}).Result(); err == nil ||
		!strings.Contains(err.Error(), "CROSSSLOT") {
		t.Errorf("a script over two events' keys got %v, want CROSSSLOT", err)
	}
	run(t, a)
	run(t, b)
	for _, ev := range evs {
		exp := status(t, a, ev, "first").ExpiresAt
		if err := b.Leave(t.Context(), ev.ID, "first"); err != nil {
			t.Fatalf("event %d: Leave: %v", ev.ID, err)
		}
		if end, err := a.EndOf(t.Context(), ev.ID, "first", exp); err != nil || end != Left {
			t.Errorf("event %d: EndOf after Leave got %v, %v; want Left", ev.ID, end, err)
		}
		eventually(t, "the second admitted after the first left", wait, func() bool {
			return status(t, b, ev, "second").Admitted
		})
	}
	rooms := map[string]bool{}
	for _, ad := range rec.all() {
		if !ad.direct {
			rooms[ad.room] = true
		}
	}
	if len(rooms) != 1 {
		t.Errorf("got admissions by the admitters of %v, want one instance's", rooms)
	}
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	if err := dbtest.DeletePrefix(ctx, rdb, prefix); err != nil {
		t.Error(err)
	}
}
