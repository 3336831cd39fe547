package benchkit_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"boxoffice/internal/benchkit"
)

// TestQuantile: the nearest-rank rule, the one every report of the lab uses: the
// q-quantile of n sorted values is the ceil(q·n)-th, so that a share q of them lies at
// or below it; sorted samples and the histogram agree.
func TestQuantile(t *testing.T) {
	t.Parallel()
	hundred := make([]float64, 100)
	var h benchkit.Histogram
	for i := range hundred {
		hundred[i] = float64(i + 1)
		h.Add(time.Duration(i+1) * time.Millisecond)
	}
	for _, tc := range []struct {
		v    []float64
		q    float64
		want float64
	}{
		{hundred, .50, 50}, {hundred, .95, 95}, {hundred, .99, 99}, {hundred, 1, 100}, {hundred, .001, 1},
		{[]float64{30, 40, 44, 46, 70}, .1, 30}, {[]float64{30, 40, 44, 46, 70}, .5, 44}, {[]float64{30, 40, 44, 46, 70}, .9, 70},
		{[]float64{7}, .99, 7},
	} {
		if got := benchkit.Quantile(tc.v, tc.q); got != tc.want {
			t.Errorf("Quantile(%d values, %v) = %v, want %v", len(tc.v), tc.q, got, tc.want)
		}
	}
	for _, q := range []float64{.5, .9, .99} {
		if got, want := h.Quantile(q), benchkit.Quantile(hundred, q)+0.5; got != want {
			t.Errorf("Histogram.Quantile(%v) = %v ms, want %v (the middle of the sorted quantile's bucket)", q, got, want)
		}
	}
	if h.N() != 100 || h.Max() != 100 {
		t.Errorf("histogram: n %d, max %v ms; want 100 and 100", h.N(), h.Max())
	}
	var empty benchkit.Histogram
	if empty.Quantile(.5) != 0 {
		t.Errorf("an empty histogram's median: got %v, want 0", empty.Quantile(.5))
	}
	d := []time.Duration{4 * time.Millisecond, time.Millisecond, 3 * time.Millisecond, 2 * time.Millisecond}
	if p50, p99 := benchkit.Percentiles(d); p50 != 2*time.Millisecond || p99 != 4*time.Millisecond {
		t.Errorf("Percentiles: got %v and %v, want 2ms and 4ms", p50, p99)
	}
	if got := benchkit.DistOf([]float64{3, 1, 2}); got.N != 3 || got.P50 != 2 || got.Max != 3 {
		t.Errorf("DistOf: got %+v, want n 3, p50 2, max 3", got)
	}
	if got := benchkit.Median([]float64{0.6, 0.2, 0.4}); got != 0.4 {
		t.Errorf("median of 3: got %v, want 0.4", got)
	}
	if got := benchkit.Median([]float64{0.6, 0.2, 0.4, 0.8}); got != 0.5 {
		t.Errorf("median of 4: got %v, want 0.5", got)
	}
}

func TestThousands(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		v    float64
		want string
	}{{0, "0"}, {999, "999"}, {1000, "1,000"}, {52000, "52,000"}, {1234567, "1,234,567"}, {-1500, "−1,500"}, {2.5, "2.5"}, {0.25, "0.25"}} {
		if got := benchkit.Thousands(tc.v); got != tc.want {
			t.Errorf("Thousands(%v) = %q, want %q", tc.v, got, tc.want)
		}
	}
	if got := benchkit.Thousands(int64(-50000)); got != "−50,000" {
		t.Errorf("Thousands(int64(-50000)) = %q, want −50,000", got)
	}
	if got := benchkit.Share(1, 8); got != "12.5 %" {
		t.Errorf("Share(1, 8) = %q, want 12.5 %%", got)
	}
}

// TestDispatch: a program's subcommands by name, its help with them listed, a
// subcommand's help, and an unknown one refused with the usage and exit status 2.
func TestDispatch(t *testing.T) {
	t.Parallel()
	var ran []string
	cmd := benchkit.Command{Name: "go", Summary: "goes", Run: func(_ context.Context, args []string, env benchkit.Env) error {
		fs := benchkit.FlagSet("prog", "go", env)
		far := fs.Bool("far", false, "how far")
		if err := fs.Parse(args); err != nil {
			return err
		}
		ran = append(ran, strings.Join(fs.Args(), " "))
		if *far {
			ran = append(ran, "far")
		}
		return nil
	}}
	var out, errs strings.Builder
	env := benchkit.Env{Stdout: &out, Stderr: &errs, Stdin: strings.NewReader("")}
	dispatch := func(args ...string) error {
		return benchkit.Dispatch(t.Context(), "prog", "prog does things.", []benchkit.Command{cmd}, args, env)
	}
	if err := dispatch("go", "-far", "home"); err != nil || strings.Join(ran, ",") != "home,far" {
		t.Errorf("go -far home: got %v, ran %q; want it run with its flag and argument", err, ran)
	}
	if err := dispatch("help"); err != nil || !strings.Contains(out.String(), "prog does things.") || !strings.Contains(out.String(), "go  goes") {
		t.Errorf("help: got %v and %q, want the doc and the commands", err, out.String())
	}
	var exit *benchkit.ExitError
	if err := dispatch("fly"); !errors.As(err, &exit) || exit.Code != 2 || !strings.Contains(errs.String(), "Commands:") {
		t.Errorf("fly: got %v and %q, want exit status 2 and the usage", err, errs.String())
	}
	if err := dispatch(); !errors.As(err, &exit) || exit.Code != 2 {
		t.Errorf("no command: got %v, want exit status 2", err)
	}
	errs.Reset()
	if err := dispatch("help", "go"); !strings.Contains(errs.String(), "-far") {
		t.Errorf("help go: got %v and %q, want go's flags", err, errs.String())
	}
}
