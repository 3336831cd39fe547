package views

import "time"

// EventTime says when an event starts, in loc, with the zone named: "Sat 14 Mar 2026,
// 19:30 CET". Every time written on a ticket goes through it, so the event's own zone
// is one argument away.
func EventTime(t time.Time, loc *time.Location) string {
	return t.In(loc).Format("Mon 2 Jan 2006, 15:04 MST")
}
