package dbtest

import (
	"context"
	"net"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// RedisCluster is a private Redis Cluster of three primaries without replicas, each
// a redis-server child of the test, for tests that must see keys and channels spread
// over slots on several nodes. It ends with the test.
type RedisCluster struct {
	Nodes []*RedisServer
}

// clusterBus is what Redis adds to a node's port for its cluster bus.
const clusterBus = 10000

// StartRedisCluster starts three cluster-enabled redis-servers, joins them with
// redis-cli --cluster create (every slot assigned, no replicas) and waits until every
// node reports the cluster ok. Without redis-server or redis-cli the test fails:
// make test installs Debian's redis-server, which ships both.
func StartRedisCluster(t testing.TB) *RedisCluster {
	t.Helper()
	if _, err := exec.LookPath("redis-cli"); err != nil {
		t.Fatal("dbtest: redis-cli is not on PATH (make test installs Debian's redis-server)")
	}
	dir := t.TempDir()
	c := &RedisCluster{}
	create := []string{"--cluster", "create"}
	for range 3 {
		port := clusterPort(t)
		n := startRedisServer(t, port, "--cluster-enabled", "yes", "--dir", dir,
			"--cluster-config-file", filepath.Join(dir, "nodes-"+port+".conf"), "--cluster-node-timeout", "2000")
		c.Nodes = append(c.Nodes, n)
		create = append(create, n.Addr())
	}
	create = append(create, "--cluster-replicas", "0", "--cluster-yes")
	ctx, cancel := context.WithTimeout(t.Context(), setupTimeout)
	defer cancel()
	if out, err := exec.CommandContext(ctx, "redis-cli", create...).CombinedOutput(); err != nil {
		t.Fatalf("dbtest: redis-cli --cluster create: %v\n%s", err, out)
	}
	for _, n := range c.Nodes {
		node := redis.NewClient(&redis.Options{Addr: n.Addr()})
		Eventually(t, "cluster node "+n.Addr()+" ok", setupTimeout, func() bool {
			info, err := node.ClusterInfo(ctx).Result()
			return err == nil && strings.Contains(info, "cluster_state:ok")
		})
		_ = node.Close()
	}
	return c
}

// URL is the cluster as REDIS_URL names one: the first node, the others as addr
// parameters (go-redis's ParseClusterURL form).
func (c *RedisCluster) URL() string {
	u := "redis://" + c.Nodes[0].Addr()
	for i, n := range c.Nodes[1:] {
		sep := "&"
		if i == 0 {
			sep = "?"
		}
		u += sep + "addr=" + n.Addr()
	}
	return u
}

// Client returns a cluster client with ContextTimeoutEnabled, as the program's
// (internal/redisurl), closed when the test ends.
func (c *RedisCluster) Client(t testing.TB) *redis.ClusterClient {
	t.Helper()
	addrs := make([]string, len(c.Nodes))
	for i, n := range c.Nodes {
		addrs[i] = n.Addr()
	}
	client := redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs, ContextTimeoutEnabled: true})
	t.Cleanup(func() { _ = client.Close() })
	return client
}

// clusterPort is a free port whose cluster bus port (port + 10000) is free too.
func clusterPort(t testing.TB) string {
	t.Helper()
	deadline := time.Now().Add(setupTimeout)
	for time.Now().Before(deadline) {
		port := FreePort(t)
		p, _ := strconv.Atoi(port)
		if p+clusterBus > 65535 {
			continue
		}
		ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p+clusterBus))
		if err != nil {
			continue
		}
		_ = ln.Close()
		return port
	}
	t.Fatal("dbtest: no free port pair for a cluster node")
	return ""
}

// MoveSlot moves the slot of key, with its keys, from the primary that owns it to
// another, as resharding does (CLUSTER SETSLOT IMPORTING/MIGRATING, MIGRATE, SETSLOT
// NODE on every primary), and returns the new owner's address.
func (c *RedisCluster) MoveSlot(t testing.TB, key string) string {
	t.Helper()
	ctx := t.Context()
	nodes := make([]*redis.Client, len(c.Nodes))
	ids := make([]string, len(c.Nodes))
	for i, n := range c.Nodes {
		nodes[i] = redis.NewClient(&redis.Options{Addr: n.Addr()})
		defer nodes[i].Close()
		id, err := nodes[i].ClusterMyID(ctx).Result()
		if err != nil {
			t.Fatal(err)
		}
		ids[i] = id
	}
	slot, err := nodes[0].ClusterKeySlot(ctx, key).Result()
	if err != nil {
		t.Fatal(err)
	}
	src := -1
	for i, n := range nodes {
		if owns(ctx, n, ids[i], slot) {
			src = i
			break
		}
	}
	if src < 0 {
		t.Fatalf("dbtest: no primary owns slot %d", slot)
	}
	dst := (src + 1) % len(nodes)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("dbtest: move slot %d from %s to %s: %v", slot, c.Nodes[src].Addr(), c.Nodes[dst].Addr(), err)
		}
	}
	must(nodes[dst].Do(ctx, "CLUSTER", "SETSLOT", slot, "IMPORTING", ids[src]).Err())
	must(nodes[src].Do(ctx, "CLUSTER", "SETSLOT", slot, "MIGRATING", ids[dst]).Err())
	keys, err := nodes[src].ClusterGetKeysInSlot(ctx, int(slot), 1000).Result()
	must(err)
	for _, k := range keys {
		must(nodes[src].Migrate(ctx, "127.0.0.1", c.Nodes[dst].Port, k, 0, setupTimeout).Err())
	}
	for _, i := range []int{dst, src, 3 - src - dst} {
		must(nodes[i].Do(ctx, "CLUSTER", "SETSLOT", slot, "NODE", ids[dst]).Err())
	}
	return c.Nodes[dst].Addr()
}

// owns reports whether n, whose id is id, is the primary serving slot, as n sees it.
func owns(ctx context.Context, n *redis.Client, id string, slot int64) bool {
	shards, err := n.ClusterShards(ctx).Result()
	if err != nil {
		return false
	}
	for _, s := range shards {
		for _, r := range s.Slots {
			if slot >= r.Start && slot <= r.End {
				for _, node := range s.Nodes {
					if node.ID == id && node.Role == "master" {
						return true
					}
				}
			}
		}
	}
	return false
}
