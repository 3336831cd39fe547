package cdn_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"boxoffice/deploy/cdn"
)

// BenchmarkProxy measures requests per second through the reference proxy with wrk: the
// cached event page, the same bytes as a static file served by the same nginx in the
// same run (nginx's plain serving speed), and the cached page gzipped as browsers ask. Each sub-benchmark is one wrk run of
// $BOXOFFICE_BENCH_DURATION (default 10s); run it with -benchtime 1x, as
// .ci/bench-cdn.sh does. One nginx worker and one wrk thread share the two cores.
func BenchmarkProxy(b *testing.B) {
	wrk, err := exec.LookPath("wrk")
	if err != nil {
		b.Fatal("wrk not found: .ci/bench-cdn.sh installs it (Debian package wrk)")
	}
	duration := os.Getenv("BOXOFFICE_BENCH_DURATION")
	if duration == "" {
		duration = "10s"
	}
	static := b.TempDir()
	s := newStack(b, cdn.Config{Workers: 1, StaticDir: static})

	path := "/events/" + s.Slug
	page := fetch(b, nil, "GET", s.Proxy.URL+path, nil, "")
	if again := fetch(b, nil, "GET", s.Proxy.URL+path, nil, ""); again.cache() != "HIT" || page.Status != 200 {
		b.Fatalf("GET %s: got status %d then X-Cache-Status %q, want 200 then HIT", path, page.Status, again.cache())
	}
	if err := os.WriteFile(filepath.Join(static, "page.html"), page.Body, 0o644); err != nil {
		b.Fatal(err)
	}
	b.Logf("page %s: %d bytes; %s", path, len(page.Body), page.Header.Get("Cache-Control"))

	for _, tc := range []struct{ name, url, header string }{
		{"cached-page", s.Proxy.URL + path, ""},
		{"static-file", s.Proxy.URL + "/__static/page.html", ""},
		// What browsers ask for: the proxy compresses each answer as it goes out.
		{"cached-page-gzip", s.Proxy.URL + path, "Accept-Encoding: gzip"},
	} {
		b.Run(tc.name, func(b *testing.B) {
			before := s.OriginRequests.Load()
			rps, n, out := runWrk(b, wrk, duration, tc.url, tc.header)
			origin := s.OriginRequests.Load() - before
			b.ReportMetric(rps, "req/s")
			// How many of the requests boxoffice itself answered: one per s-maxage
			// (a background refresh), not one per buyer.
			b.ReportMetric(float64(origin), "origin-reqs")
			b.ReportMetric(0, "ns/op") // one run of wrk, not b.N operations
			if origin*100 > n {
				b.Errorf("origin answered %d of %d requests, want under 1%% (the page must come from the cache)", origin, n)
			}
			if testing.Verbose() {
				b.Logf("wrk %s:\n%s", tc.url, out)
			}
		})
	}
}

var (
	wrkRate   = regexp.MustCompile(`Requests/sec:\s+([0-9.]+)`)
	wrkCount  = regexp.MustCompile(`(\d+) requests in`)
	wrkErrors = regexp.MustCompile(`Non-2xx or 3xx responses: (\d+)|Socket errors: .*`)
)

// runWrk loads url for duration from 64 connections on one thread, with one extra
// request header if set, and returns the rate and the number of requests, failing on
// any error answer.
func runWrk(b *testing.B, wrk, duration, url, header string) (float64, int64, []byte) {
	b.Helper()
	d, err := time.ParseDuration(duration)
	if err != nil {
		b.Fatalf("BOXOFFICE_BENCH_DURATION=%q: %v", duration, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), d+30*time.Second)
	defer cancel()
	args := []string{"-t1", "-c64", "-d" + duration, "--latency"}
	if header != "" {
		args = append(args, "-H", header)
	}
	out, err := exec.CommandContext(ctx, wrk, append(args, url)...).CombinedOutput()
	if err != nil {
		b.Fatalf("wrk: %v\n%s", err, out)
	}
	if m := wrkErrors.Find(out); m != nil {
		b.Errorf("wrk %s: %s", url, m)
	}
	m := wrkRate.FindSubmatch(out)
	if m == nil {
		b.Fatalf("wrk printed no Requests/sec:\n%s", out)
	}
	rps, err := strconv.ParseFloat(string(m[1]), 64)
	if err != nil {
		b.Fatal(err)
	}
	var n int64
	if c := wrkCount.FindSubmatch(out); c != nil {
		n, _ = strconv.ParseInt(string(c[1]), 10, 64)
	}
	return rps, n, bytes.TrimSpace(out)
}
