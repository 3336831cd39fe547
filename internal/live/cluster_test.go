package live

import (
	"context"
	"maps"
	"slices"
	"strconv"
	"testing"

	"github.com/redis/go-redis/v9"

	"boxoffice/internal/dbtest"
)

// TestHubOnRedisCluster: on a three-primary Redis Cluster, with one event on each
// primary, one Publisher round trip (a pipeline over three slots) announces a change
// of every event, and each event's watchers in one hub get their own seats only. Each
// event's subscription sits on the primary that owns its channel's slot: that node
// counts one shard subscriber, the others none.
func TestHubOnRedisCluster(t *testing.T) {
	t.Parallel()
	c := dbtest.StartRedisCluster(t)
	rdb, prefix := c.Client(t), "test:"
	ctx := t.Context()
	owner := map[int64]string{}
	var events []int64
	for id := int64(1); len(events) < len(c.Nodes) && id < 1000; id++ {
		node, err := rdb.MasterForKey(ctx, versionKey(prefix, id))
		if err != nil {
			t.Fatal(err)
		}
		addr := node.Options().Addr
		if !slices.Contains(slices.Collect(maps.Values(owner)), addr) {
			owner[id] = addr
			events = append(events, id)
		}
	}
	if len(events) < len(c.Nodes) {
		t.Fatalf("got events on %d primaries, want %d", len(events), len(c.Nodes))
	}
	k := newHooks()
	h := newHub(t, rdb, prefix, k, HubOptions{})
	watchers := map[int64]*Watcher{}
	for _, ev := range events {
		watchers[ev] = watch(t, h, ev, 0)
	}
	for range events {
		k.nextReset(t)
	}
	outsider := Subscribe(ctx, rdb, prefix, events[0])
	defer outsider.Close()
	if _, err := outsider.Receive(ctx); err != nil {
		t.Fatalf("outsider's SSUBSCRIBE: %v", err)
	}

	p := NewPublisher(rdb, prefix, quiet)
	for _, ev := range events {
		p.SeatsChanged(ctx, ev, []int64{ev * 100, ev*100 + 1})
	}
	p.Close()
	for _, ev := range events {
		if got, want := until(t, watchers[ev], 1), []int64{ev * 100, ev*100 + 1}; !slices.Equal(got, want) {
			t.Errorf("event %d: watcher got seats %v, want %v", ev, got, want)
		}
	}
	if m, err := outsider.ReceiveMessage(ctx); err != nil || m.Payload != `{"v":1,"seats":[`+itoa(events[0]*100)+`,`+itoa(events[0]*100+1)+`]}` {
		t.Errorf("outsider got %+v, %v; want event %d's change", m, err, events[0])
	}

	for _, ev := range events[1:] { // the outsider adds one on events[0]'s node
		ch := seatsChannel(prefix, ev)
		for _, n := range c.Nodes {
			node := redis.NewClient(&redis.Options{Addr: n.Addr()})
			counts, err := node.PubSubShardNumSub(ctx, ch).Result()
			_ = node.Close()
			want := int64(0)
			if n.Addr() == owner[ev] {
				want = 1
			}
			if err != nil || counts[ch] != want {
				t.Errorf("event %d on node %s: got %d shard subscribers (%v), want %d", ev, n.Addr(), counts[ch], err, want)
			}
		}
	}
	cctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	if err := dbtest.DeletePrefix(cctx, rdb, prefix); err != nil {
		t.Error(err)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// TestHubFollowsMovedSlot: when resharding moves an event's slot to another primary
// while the hub follows it, Redis ends the subscription (sunsubscribe); the feed
// subscribes again where the slot now lives, its watchers are told to reload (what
// was published meanwhile went unheard), and later changes reach them again.
func TestHubFollowsMovedSlot(t *testing.T) {
	t.Parallel()
	c := dbtest.StartRedisCluster(t)
	rdb, prefix := c.Client(t), "test:"
	ctx := t.Context()
	k := newHooks()
	h := newHub(t, rdb, prefix, k, HubOptions{})
	w := watch(t, h, 1, 0)
	k.nextReset(t)
	if v := publish(t, rdb, prefix, 1, 10); until(t, w, v)[0] != 10 {
		t.Fatal("the first change did not arrive")
	}
	to := c.MoveSlot(t, versionKey(prefix, 1))
	if b := next(t, w); !b.Reset || b.Version != 1 {
		t.Fatalf("after the slot moved got %+v, want a Reset at version 1", b)
	}
	p := NewPublisher(rdb, prefix, quiet)
	p.SeatsChanged(ctx, 1, []int64{20})
	p.Close()
	if got := until(t, w, 2); !slices.Equal(got, []int64{20}) {
		t.Errorf("after the move got seats %v, want [20]", got)
	}
	node := redis.NewClient(&redis.Options{Addr: to})
	defer node.Close()
	ch := seatsChannel(prefix, 1)
	if n, err := node.PubSubShardNumSub(ctx, ch).Result(); err != nil || n[ch] != 1 {
		t.Errorf("the slot's new owner %s: got %d shard subscribers (%v), want 1", to, n[ch], err)
	}
}
