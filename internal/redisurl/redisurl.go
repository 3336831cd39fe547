// Package redisurl opens the Redis that REDIS_URL names: one server, or a Redis
// Cluster. Callers take a redis.UniversalClient, which both clients satisfy.
package redisurl

import (
	"fmt"
	"net/url"

	"github.com/redis/go-redis/v9"
)

// Open returns a client for raw. A URL with one or more addr query parameters names a
// Redis Cluster through seed nodes, in the form go-redis's ParseClusterURL reads
// (redis://host1:port?addr=host2:port&addr=host3:port); any other URL names one
// server, as redis.ParseURL reads it (redis://host:port/db).
//
// Calls end at their context's deadline, not only at the read timeout (seconds): a
// Redis that hangs must turn into quick fallbacks (the rate limiter lets calls through,
// the queue says it is paused), never into hung requests.
func Open(raw string) (redis.UniversalClient, error) {
	cluster, err := IsCluster(raw)
	if err != nil {
		return nil, err
	}
	if cluster {
		opt, err := redis.ParseClusterURL(raw)
		if err != nil {
			return nil, err
		}
		opt.ContextTimeoutEnabled = true
		return redis.NewClusterClient(opt), nil
	}
	opt, err := redis.ParseURL(raw)
	if err != nil {
		return nil, err
	}
	opt.ContextTimeoutEnabled = true
	return redis.NewClient(opt), nil
}

// IsCluster reports whether raw names a Redis Cluster: it has addr query parameters.
func IsCluster(raw string) (bool, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return false, fmt.Errorf("redis: %w", err)
	}
	return u.Query().Has("addr"), nil
}
