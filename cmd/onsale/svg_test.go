package main

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"boxoffice/internal/benchkit"
)

// parsedChart is what a reader of the SVG sees: its name, its description, and per
// panel its frame, its scale's labels and its line.
type parsedChart struct {
	role, labelledBy, title, desc string
	frames                        [][4]float64 // x, y, width, height of each panel's plot
	scales                        [][]string   // each panel's scale labels, bottom up
	series                        []string     // each panel's path
	times, marks                  []string
	text                          []string
}

func parseChart(t *testing.T, svg []byte) parsedChart {
	t.Helper()
	var c parsedChart
	d := xml.NewDecoder(bytes.NewReader(svg))
	var stack []xml.StartElement
	attr := func(e xml.StartElement, name string) string {
		for _, a := range e.Attr {
			if a.Name.Local == name {
				return a.Value
			}
		}
		return ""
	}
	num := func(e xml.StartElement, name string) float64 {
		v, err := strconv.ParseFloat(attr(e, name), 64)
		if err != nil {
			t.Fatalf("<%s %s=%q>: %v", e.Name.Local, name, attr(e, name), err)
		}
		return v
	}
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("the chart is not well-formed XML: %v\n%s", err, svg)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			stack = append(stack, tok)
			switch {
			case tok.Name.Local == "svg":
				c.role, c.labelledBy = attr(tok, "role"), attr(tok, "aria-labelledby")
			case tok.Name.Local == "rect" && attr(tok, "stroke") == "#999":
				c.frames = append(c.frames, [4]float64{num(tok, "x"), num(tok, "y"), num(tok, "width"), num(tok, "height")})
				c.scales = append(c.scales, nil)
			case tok.Name.Local == "path" && attr(tok, "class") == "series":
				c.series = append(c.series, attr(tok, "d"))
			}
		case xml.EndElement:
			stack = stack[:len(stack)-1]
		case xml.CharData:
			if len(stack) == 0 {
				continue
			}
			e, s := stack[len(stack)-1], string(tok)
			switch {
			case e.Name.Local == "title":
				c.title = s
			case e.Name.Local == "desc":
				c.desc = s
			case attr(e, "class") == "scale":
				// A panel's scale is written before its frame: it belongs to the next.
				if len(c.scales) == len(c.frames) {
					c.scales = append(c.scales, nil)
				}
				c.scales[len(c.frames)] = append(c.scales[len(c.frames)], s)
			case attr(e, "class") == "time":
				c.times = append(c.times, s)
			case attr(e, "class") == "marker":
				c.marks = append(c.marks, s)
			case e.Name.Local == "text":
				c.text = append(c.text, s)
			}
		}
	}
	if n := len(c.scales); n > len(c.frames) && c.scales[n-1] == nil {
		c.scales = c.scales[:n-1]
	}
	return c
}

// points are the path's coordinates.
func points(t *testing.T, d string) [][2]float64 {
	t.Helper()
	var ps [][2]float64
	for _, seg := range strings.Split(d, " L") {
		f := strings.Fields(strings.TrimPrefix(seg, "M"))
		if len(f) != 2 {
			t.Fatalf("path segment %q", seg)
		}
		x, err1 := strconv.ParseFloat(f[0], 64)
		y, err2 := strconv.ParseFloat(f[1], 64)
		if err1 != nil || err2 != nil {
			t.Fatalf("path segment %q", seg)
		}
		ps = append(ps, [2]float64{x, y})
	}
	return ps
}

// chartReport is a sale of a stadium's size: a queue that peaks at 15,119, up to 549
// shopping, the room's limit cut from 128 to 82 for a while, 4,000 seats held at the
// most and all 50,000 sold, sold out at +107.7 s.
func chartReport(withLimit bool) *report {
	r := &report{Buyers: 20000}
	r.Event.Slug, r.Event.Seats, r.Event.Places = `stadium <"a&b">`, 50000, 2000
	r.Admission.Configured = 128
	soldOut := 107.7
	r.SoldOutSeconds = &soldOut
	r.Counts.PlacesSold = 52000
	for t := -55.0; t <= 260; t++ {
		s := sample{T: t}
		switch {
		case t <= 30:
			s.Queued = int64(6000 + (t+55)/85*9119)
		default:
			s.Queued = int64(max(0, 15119-(t-30)*60))
		}
		if t >= 0 && t < 110 {
			s.Active = 300 + int64(t)*249/109
			s.Held = int(min(4000, t*40))
		}
		s.Sold = int(min(50000, max(0, t*465)))
		if withLimit {
			s.Limit = 128
			if t > 10 && t < 30 {
				s.Limit = 82
			}
		}
		r.Timeline = append(r.Timeline, s)
	}
	return r
}

// TestChart reads the chart as a person (and a screen reader) would: a title and a
// summary; one panel a quantity, each with round scale labels and a line that stays
// inside its frame, whose highest point stands where the labels say its peak is;
// the time axis in round seconds from the onsale; the onsale and the sell-out marked.
func TestChart(t *testing.T) {
	for _, withLimit := range []bool{true, false} {
		var buf bytes.Buffer
		r := chartReport(withLimit)
		if err := r.writeSVG(&buf); err != nil {
			t.Fatal(err)
		}
		c := parseChart(t, buf.Bytes())

		if c.role != "img" || c.labelledBy != "chart-title chart-desc" {
			t.Errorf("role %q, aria-labelledby %q: want img, chart-title chart-desc", c.role, c.labelledBy)
		}
		if want := `stadium <"a&b">: 20,000 buyers`; c.title != want {
			t.Errorf("title %q, want %q", c.title, want)
		}
		for _, want := range []string{"50,000 seats and 2,000 standing places", "the queue peaked at 15,119 (+30 s)", "sold out 107.7 s after the onsale", "52,000 places sold"} {
			if !strings.Contains(c.desc, want) {
				t.Errorf("description %q lacks %q", c.desc, want)
			}
		}

		type want struct {
			title string
			scale []string
			peak  float64
		}
		wants := []want{
			{"waiting in the queue", []string{"0", "5,000", "10,000", "15,000", "20,000"}, 15119},
			{"shopping (admitted, not done)", []string{"0", "200", "400", "600"}, 549},
		}
		if withLimit {
			wants = append(wants, want{"the waiting room's admission limit, a second", []string{"0", "50", "100", "150"}, 128})
		}
		wants = append(wants,
			want{"seats held", []string{"0", "1,000", "2,000", "3,000", "4,000"}, 4000},
			want{"seats sold", []string{"0", "20,000", "40,000", "60,000"}, 50000})
		if len(c.frames) != len(wants) || len(c.series) != len(wants) || len(c.scales) != len(wants) {
			t.Fatalf("limit %v: %d frames, %d lines, %d scales; want %d panels", withLimit, len(c.frames), len(c.series), len(c.scales), len(wants))
		}
		for i, w := range wants {
			if !slices.Contains(c.text, w.title) {
				t.Errorf("no panel titled %q in %q", w.title, c.text)
			}
			if strings.Join(c.scales[i], " | ") != strings.Join(w.scale, " | ") {
				t.Errorf("%s: scale %q, want %q", w.title, c.scales[i], w.scale)
			}
			f := c.frames[i]
			top, _ := strconv.ParseFloat(strings.ReplaceAll(w.scale[len(w.scale)-1], ",", ""), 64)
			highest := math.Inf(1)
			for _, p := range points(t, c.series[i]) {
				if p[0] < f[0]-0.1 || p[0] > f[0]+f[2]+0.1 || p[1] < f[1]-0.1 || p[1] > f[1]+f[3]+0.1 {
					t.Fatalf("%s: point %v outside its frame %v", w.title, p, f)
				}
				highest = min(highest, p[1])
			}
			if wantY := f[1] + f[3] - w.peak/top*f[3]; math.Abs(highest-wantY) > 0.6 {
				t.Errorf("%s: the line's highest point at y %.1f, want %.1f (%v of the scale's %v)", w.title, highest, wantY, w.peak, top)
			}
		}
		if got := strings.Join(c.times, " | "); got != "0 s | +60 s | +120 s | +180 s | +240 s" {
			t.Errorf("time axis %q", got)
		}
		if got := strings.Join(c.marks, " | "); got != "onsale | sold out +107.7 s" {
			t.Errorf("markers %q", got)
		}
	}

	var buf bytes.Buffer
	if err := (&report{}).writeSVG(&buf); err != nil {
		t.Fatal(err)
	}
	if c := parseChart(t, buf.Bytes()); len(c.series) != 0 || !slices.Contains(c.text, "no samples") {
		t.Errorf("an empty timeline: %d lines, text %q; want none and \"no samples\"", len(c.series), c.text)
	}
}

// TestReplot draws the chart of a saved report, as `onsale replot -svg run.svg
// run.json` does, the same as the run itself drew it; a file that is no report is
// refused with its name.
func TestReplot(t *testing.T) {
	dir := t.TempDir()
	r := chartReport(true)
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	in, out := filepath.Join(dir, "run.json"), filepath.Join(dir, "run.svg")
	if err := os.WriteFile(in, b, 0o600); err != nil {
		t.Fatal(err)
	}
	env := benchkit.Env{Stdout: io.Discard, Stderr: io.Discard}
	replot := func(args ...string) error {
		return benchkit.Dispatch(t.Context(), "onsale", doc, commands(), args, env)
	}
	if err := replot("replot", "-svg", out, in); err != nil {
		t.Fatalf("replot: %v", err)
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	if err := r.writeSVG(&want); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want.Bytes()) {
		t.Errorf("the replotted chart differs from the run's own (%d against %d bytes)", len(got), want.Len())
	}
	if err := replot("replot", in); err == nil || !strings.Contains(err.Error(), "-svg") {
		t.Errorf("replot without -svg: %v, want an error naming -svg", err)
	}
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte("not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := replot("replot", "-svg", out, bad); err == nil || !strings.Contains(err.Error(), bad) {
		t.Errorf("replot of a file that is no report: %v, want an error naming it", err)
	}
}

func TestNiceScale(t *testing.T) {
	for _, c := range []struct{ hi, step, top float64 }{
		{15119, 5000, 20000}, {549, 200, 600}, {128, 50, 150}, {4000, 1000, 4000},
		{50000, 20000, 60000}, {0, 1, 4}, {3, 1, 3}, {0.7, 0.2, 0.8}, {1e6, 250000, 1e6},
	} {
		step, top := niceScale(c.hi, 4)
		if math.Abs(step-c.step) > 1e-9 || math.Abs(top-c.top) > 1e-9 {
			t.Errorf("niceScale(%v, 4) = %v, %v; want %v, %v", c.hi, step, top, c.step, c.top)
		}
	}
	for _, c := range []struct {
		t0, t1 float64
		want   string
	}{{-55, 261, "[0 60 120 180 240]"}, {-3, 20, "[0 5 10 15 20]"}, {-600, 3000, "[-600 0 600 1200 1800 2400 3000]"}} {
		if got := fmtFloats(timeTicks(c.t0, c.t1)); got != c.want {
			t.Errorf("timeTicks(%v, %v) = %s, want %s", c.t0, c.t1, got, c.want)
		}
	}
}

func fmtFloats(fs []float64) string {
	s := make([]string, len(fs))
	for i, f := range fs {
		s[i] = strconv.FormatFloat(f, 'f', -1, 64)
	}
	return "[" + strings.Join(s, " ") + "]"
}
