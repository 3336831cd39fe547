package web

import (
	"bytes"
	"compress/gzip"
	"context"
	"testing"
	"time"

	"boxoffice/internal/booking"
	"boxoffice/internal/dbtest"
	"boxoffice/internal/demo"
	"boxoffice/views"
)

// seatPageBudget is the most a seat page may weigh gzipped, overview or one section: a
// phone on a slow connection gets it in a second or two.
const seatPageBudget = 150 << 10

func gzipLen(tb testing.TB, p []byte) int {
	tb.Helper()
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.DefaultCompression) // a valid level cannot fail
	if _, err := zw.Write(p); err != nil {
		tb.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		tb.Fatal(err)
	}
	return buf.Len()
}

// BenchmarkSeatMapRender builds and renders the seat page of a 50,000-seat venue from
// the cached map: the section overview and one section of 2,500 seats. It reports the
// page's size raw and gzipped (goal: under 150 KB gzipped each); ns/op is the render
// time, the map already in the cache.
//
//	go test -run '^$' -bench SeatMapRender -benchtime 20x ./web/
func BenchmarkSeatMapRender(b *testing.B) {
	ctx := context.Background()
	pool := dbtest.Pool(b)
	id, err := demo.Create(ctx, pool, demo.BigSpec("x", 50000, time.Now()))
	if err != nil {
		b.Fatal(err)
	}
	cfg := booking.DefaultConfig()
	cfg.MapMaxAge = time.Hour // measure rendering, not reloading the map
	bk := booking.New(pool, cfg, nil, nil, nil)
	s := &server{Deps: Deps{Buyer: bk.Buyer, Maps: bk.Maps}}
	ev, err := bk.Buyer.Event(ctx, id)
	if err != nil {
		b.Fatal(err)
	}
	for _, tc := range []struct{ name, section string }{{"overview", ""}, {"section", "S07"}} {
		b.Run(tc.name, func(b *testing.B) {
			p := page("Choose seats")
			p.CSRFToken = "token"
			var buf bytes.Buffer
			for b.Loop() {
				buf.Reset()
				sp, err := s.seatsPageFor(ctx, ev, tc.section, "", p, views.Message{})
				if err != nil {
					b.Fatal(err)
				}
				if err := views.SeatsPageView(sp).Render(ctx, &buf); err != nil {
					b.Fatal(err)
				}
			}
			gz := gzipLen(b, buf.Bytes())
			b.ReportMetric(float64(buf.Len())/1024, "KB")
			b.ReportMetric(float64(gz)/1024, "gzKB")
			if gz > seatPageBudget {
				b.Errorf("%s: %d bytes gzipped, want at most %d", tc.name, gz, seatPageBudget)
			}
		})
	}
}
