package main

import (
	"encoding/csv"
	"io"
	"strconv"
	"time"
)

// writeTrace writes one CSV line per buyer, for studying the queue beyond the report
// (how another ETA rule would have fared, say): when they joined and were admitted,
// and their first ETA after the draw (when shown, the seconds, for how many
// admissions, the rate the room had measured then), in seconds from the onsale; empty
// where it did not happen; and whether the page told them the tickets may be gone
// before their turn ("first": before any wait, "later", or empty). Times are the simulator's, seen up to a poll late, as in
// the report.
func writeTrace(w io.Writer, buyers []*buyer, onsale time.Time) error {
	cw := csv.NewWriter(w)
	since := func(t time.Time) string {
		if t.IsZero() {
			return ""
		}
		return strconv.FormatFloat(t.Sub(onsale).Seconds(), 'f', 3, 64)
	}
	if err := cw.Write([]string{"buyer", "joined", "pre_queue", "admitted", "eta_at", "eta_seconds", "eta_places", "eta_rate", "outcome", "warned"}); err != nil {
		return err
	}
	for _, b := range buyers {
		etaAt, etaSecs, etaPlaces, etaRate := "", "", "", ""
		if len(b.etas) > 0 {
			e := b.etas[0]
			etaAt, etaSecs, etaPlaces = since(e.at), strconv.Itoa(e.seconds), strconv.Itoa(e.places)
			etaRate = strconv.FormatFloat(e.rate, 'f', 2, 64)
		}
		admitted, warned := "", ""
		switch {
		case b.warnedFirst:
			warned = "first"
		case b.warned:
			warned = "later"
		}
		if b.admitted {
			admitted = since(b.admittedAt)
		}
		if err := cw.Write([]string{
			strconv.Itoa(b.id), since(b.joinedAt), strconv.FormatBool(b.preQueue), admitted,
			etaAt, etaSecs, etaPlaces, etaRate, b.outcome, warned,
		}); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}
