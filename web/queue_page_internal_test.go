package web

import (
	"boxoffice/internal/booking"
	"boxoffice/internal/waitroom"
	"boxoffice/views"
	"context"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
)

// TestQueueStatusView: the queue page's status as the server paints it for each state
// it can show: the words, the state and figures queue.js follows the board with (the
// number, place and served at the look only while waiting after the draw; the place
// written to read back exactly), and the marked texts it rewrites only where it may.
func TestQueueStatusView(t *testing.T) {
	t.Parallel()
	ev := booking.Event{ID: 42, Slug: "gig", OnsaleAt: time.Now().Add(-time.Hour)}
	now := time.Now()
	waiting := waitroom.Status{Queued: true, Position: 1235, Ahead: 1234, Number: 1300, Place: 1300,
		ETAMin: 4 * time.Minute, ETA: 5 * time.Minute, ETAMax: 6 * time.Minute, SeatsLeft: 1234,
		PollAfter: 5 * time.Second, LookAfter: time.Minute}
	allHeld := waiting
	allHeld.AllHeld, allHeld.ETAMin, allHeld.ETA, allHeld.ETAMax = true, 0, 0, 0
	gone := waiting
	gone.LikelyGone, gone.ETAMin, gone.ETA, gone.ETAMax = true, 0, 0, 0
	soldOut := waiting
	soldOut.SoldOut, soldOut.SeatsLeft = true, 0
	drawn := waitroom.Status{Queued: true, Position: 3, Ahead: 2, Number: 3, Place: 0.123456789012345678,
		ETAMin: time.Second, ETAMax: 2 * time.Second, PollAfter: time.Second, LookAfter: time.Minute}
	preQueue := waitroom.Status{Queued: true, PreQueue: true, Place: 0.25, DrawAt: now.Add(90 * time.Second),
		PollAfter: 5 * time.Second, LookAfter: 90 * time.Second}
	tests := []struct {
		name  string
		st    waitroom.Status
		start int
		says  []string
		attrs map[string]string
		marks map[string]string // data-q marks and their text; others must be absent
		// blocks are the data-q parts a page shows or hides from the board (waiting):
		// whether each is shown; their words are in says.
		blocks map[string]bool
	}{
		{"waiting", waiting, 2000,
			[]string{"You are number 1,235 in the queue", "1,234 people are ahead of you.", "Estimated wait: about 4 to 6 minutes."},
			map[string]string{"data-state": "waiting", "data-number": "1300", "data-place": "1300", "data-served": "65",
				"data-poll-after": "5", "data-look-after": "60", "data-board": "/api/v1/events/42/queue/board"},
			map[string]string{"position": "You are number 1,235 in the queue", "ahead": "1,234 people are ahead of you.", "wait": "about 4 to 6 minutes",
				"odds": "About 1,200 seats left, 1,234 people ahead of you.", "progress": "38%"},
			map[string]bool{"line": true, "estimate": true, "held": false, "gone": false, "soldout": false}},
		{"likely gone", gone, 2000, []string{"You are number 1,235", "More people are ahead of you than the tickets left are likely to serve"},
			map[string]string{"data-state": "waiting", "data-number": "1300"},
			map[string]string{"position": "You are number 1,235 in the queue", "ahead": "1,234 people are ahead of you.",
				"wait": "not known yet: it is measured from how fast people are let in",
				"odds": "About 1,200 seats left, 1,234 people ahead of you.", "progress": "38%"},
			map[string]bool{"line": true, "estimate": false, "held": false, "gone": true, "soldout": false}},
		{"drawn place", drawn, 0, []string{"You are number 3 in the queue"},
			map[string]string{"data-state": "waiting", "data-number": "3", "data-place": "0.12345678901234568", "data-served": "0"},
			map[string]string{"position": "You are number 3 in the queue", "ahead": "2 people are ahead of you.", "wait": "less than a minute", "odds": "", "progress": "0%"},
			map[string]bool{"line": true, "estimate": true, "held": false, "gone": false, "soldout": false}},
		{"all held", allHeld, 2000, []string{"You are number 1,235", "Every seat and place left is held"},
			map[string]string{"data-state": "allHeld", "data-number": "1300"},
			map[string]string{"position": "You are number 1,235 in the queue", "ahead": "1,234 people are ahead of you.",
				"wait": "not known yet: it is measured from how fast people are let in",
				"odds": "About 1,200 seats left, 1,234 people ahead of you.", "progress": "38%"},
			map[string]bool{"line": true, "estimate": false, "held": true, "gone": false, "soldout": false}},
		{"sold out", soldOut, 0, []string{"Sold out", "Every seat and place is sold."},
			map[string]string{"data-state": "soldOut", "data-number": "1300", "data-look-after": "60"}, nil, nil},
		{"pre-queue", preQueue, 0, []string{"You are in the waiting room", "your place is drawn at random at"},
			map[string]string{"data-state": "preQueue", "data-look-after": "90", "data-board": "/api/v1/events/42/queue/board",
				"data-place": "0.25"}, nil,
			// The queue's marks, empty in a hidden block, for queue.js to fill after
			// the draw from the board (where the drawn place stands) until the look.
			map[string]bool{"draw": true, "drawn": false, "position": true, "line": true, "ahead": true, "estimate": true,
				"wait": true, "held": false, "gone": false, "odds": false, "progress": true, "soldout": false}},
		{"admitted", waitroom.Status{Admitted: true}, 0, []string{"It is your turn", "Choose seats"},
			map[string]string{"data-state": "admitted"}, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var b strings.Builder
			if err := views.QueueStatusView(queueStatusModel(ev, tt.st, tt.start, now)).Render(context.Background(), &b); err != nil {
				t.Fatal(err)
			}
			doc, err := goquery.NewDocumentFromReader(strings.NewReader(b.String()))
			if err != nil {
				t.Fatal(err)
			}
			text := strings.Join(strings.Fields(doc.Text()), " ")
			for _, want := range tt.says {
				if !strings.Contains(text, want) {
					t.Errorf("got %q, want it to say %q", text, want)
				}
			}
			span := doc.Find("[data-poll-after]")
			checkAttrs(t, tt.name, span, tt.attrs)
			if _, ok := tt.attrs["data-number"]; !ok && span.Is("[data-number], [data-served]") {
				t.Errorf("want no number or served: got %s", b.String()[:min(len(b.String()), 300)])
			}
			if _, ok := tt.attrs["data-place"]; !ok && !tt.st.Queued && span.Is("[data-place]") {
				t.Errorf("want no place: got %s", b.String()[:min(len(b.String()), 300)])
			}
			doc.Find("[data-q]").Each(func(_ int, el *goquery.Selection) {
				mark := el.AttrOr("data-q", "")
				if shown, ok := tt.blocks[mark]; ok {
					if _, hidden := el.Attr("hidden"); hidden == shown {
						t.Errorf("data-q=%s: hidden %v, want shown %v", mark, hidden, shown)
					}
					return
				}
				want, ok := tt.marks[mark]
				if !ok {
					t.Errorf("data-q=%s: want no such mark in this state", mark)
				} else if got := el.Text(); got != want {
					t.Errorf("data-q=%s: got %q, want %q", mark, got, want)
				}
				if _, hidden := el.Attr("hidden"); hidden != (want == "") {
					t.Errorf("data-q=%s: hidden %v, want hidden only when it says nothing", mark, hidden)
				}
			})
			if n := doc.Find("[data-q]").Length(); n != len(tt.marks)+len(tt.blocks) {
				t.Errorf("data-q marks: got %d, want %d (%v and %v)", n, len(tt.marks)+len(tt.blocks),
					slices.Sorted(maps.Keys(tt.marks)), slices.Sorted(maps.Keys(tt.blocks)))
			}
		})
	}
}

// checkAttrs checks the attributes of the one element sel holds.
func checkAttrs(t *testing.T, what string, sel *goquery.Selection, want map[string]string) {
	t.Helper()
	if sel.Length() != 1 {
		t.Errorf("%s: got %d status spans, want 1", what, sel.Length())
		return
	}
	for _, name := range slices.Sorted(maps.Keys(want)) {
		if got, ok := sel.Attr(name); !ok || got != want[name] {
			t.Errorf("%s: %s got %q (set: %v), want %q", what, name, got, ok, want[name])
		}
	}
}
