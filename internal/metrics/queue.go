package metrics

import (
	"context"
	"log/slog"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// queueTimeout bounds the reads of one scrape's waiting rooms: a Redis that hangs
// leaves the queue gauges out of that scrape rather than holding it.
const queueTimeout = 2 * time.Second

var (
	queueLengthDesc = prometheus.NewDesc(prometheus.BuildFQName(Namespace, "queue", "length"),
		"Visitors waiting in the event's waiting room.", []string{"event"}, nil)
	queueActiveDesc = prometheus.NewDesc(prometheus.BuildFQName(Namespace, "queue", "active"),
		"Admitted shoppers of the event whose admission has not ended.", []string{"event"}, nil)
	queueRateDesc = prometheus.NewDesc(prometheus.BuildFQName(Namespace, "queue", "admission_rate"),
		"Admissions per second the event's waiting room is configured for.", []string{"event"}, nil)
	queueLimitDesc = prometheus.NewDesc(prometheus.BuildFQName(Namespace, "queue", "admission_limit"),
		"Admissions per second the event's waiting room allows now: the configured rate, lowered while the application is past LATENCY_BOUND.", []string{"event"}, nil)
	presaleLengthDesc = prometheus.NewDesc(prometheus.BuildFQName(Namespace, "presale_queue", "length"),
		"Access code holders waiting in the event's presale room.", []string{"event"}, nil)
	presaleActiveDesc = prometheus.NewDesc(prometheus.BuildFQName(Namespace, "presale_queue", "active"),
		"Access code holders admitted from the event's presale room whose admission has not ended.", []string{"event"}, nil)
)

// queueCollector reads the waiting rooms at each scrape: they live in Redis and are
// shared by every instance, so any instance reports the same figures.
type queueCollector struct {
	read func(ctx context.Context) ([]Queue, error)
	log  *slog.Logger
}

func (c *queueCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- queueLengthDesc
	ch <- queueActiveDesc
	ch <- queueRateDesc
	ch <- queueLimitDesc
	ch <- presaleLengthDesc
	ch <- presaleActiveDesc
}

func (c *queueCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), queueTimeout)
	defer cancel()
	qs, err := c.read(ctx)
	if err != nil {
		// What was read is still reported; the scrape itself does not fail, or the
		// pools' figures would be lost with it exactly when they matter.
		c.log.Warn("metrics: waiting rooms not read", "err", err)
	}
	for _, q := range qs {
		ev := strconv.FormatInt(q.EventID, 10)
		if q.Presale {
			ch <- prometheus.MustNewConstMetric(presaleLengthDesc, prometheus.GaugeValue, float64(q.Waiting), ev)
			ch <- prometheus.MustNewConstMetric(presaleActiveDesc, prometheus.GaugeValue, float64(q.Active), ev)
			continue
		}
		ch <- prometheus.MustNewConstMetric(queueLengthDesc, prometheus.GaugeValue, float64(q.Waiting), ev)
		ch <- prometheus.MustNewConstMetric(queueActiveDesc, prometheus.GaugeValue, float64(q.Active), ev)
		ch <- prometheus.MustNewConstMetric(queueRateDesc, prometheus.GaugeValue, q.Rate, ev)
		ch <- prometheus.MustNewConstMetric(queueLimitDesc, prometheus.GaugeValue, q.Limit, ev)
	}
}
