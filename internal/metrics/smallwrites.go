package metrics

import (
	"maps"
	"slices"

	"github.com/prometheus/client_golang/prometheus"

	"boxoffice/internal/groupcommit"
)

// smallWritesCollector reports the batched small writes (sessions, Idempotency-Keys'
// claims and answers) by kind, read once a scrape: how many, in how many batches
// (their ratio is what batching saves), and how many wait for the next batch now (a
// count that stays up says their one connection is short).
type smallWritesCollector struct {
	read                   func() map[string]groupcommit.Stats
	writes, batches, waits *prometheus.Desc
}

func smallWrites(read func() map[string]groupcommit.Stats) []prometheus.Collector {
	kind := []string{"kind"}
	return []prometheus.Collector{&smallWritesCollector{
		read: read,
		writes: prometheus.NewDesc(Namespace+"_small_writes_total",
			"Small writes (kind: session, key_claim, key_answer) sent in batches on their own connection.", kind, nil),
		batches: prometheus.NewDesc(Namespace+"_small_write_batches_total",
			"Batches, one statement each, that carried the small writes.", kind, nil),
		waits: prometheus.NewDesc(Namespace+"_small_writes_waiting",
			"Small writes waiting now for the next batch.", kind, nil),
	}}
}

func (c *smallWritesCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.writes
	ch <- c.batches
	ch <- c.waits
}

func (c *smallWritesCollector) Collect(ch chan<- prometheus.Metric) {
	stats := c.read()
	for _, k := range slices.Sorted(maps.Keys(stats)) {
		st := stats[k]
		ch <- prometheus.MustNewConstMetric(c.writes, prometheus.CounterValue, float64(st.Calls), k)
		ch <- prometheus.MustNewConstMetric(c.batches, prometheus.CounterValue, float64(st.Batches), k)
		ch <- prometheus.MustNewConstMetric(c.waits, prometheus.GaugeValue, float64(st.Waiting), k)
	}
}
