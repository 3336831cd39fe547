// Package audittext says the audit log's entries and the orders' states in words for
// staff: "Refunded by Anna at 5 Jan 2027, 14:03 CET (€40.50, 2 tickets)", and the
// record's before and after as the fields that changed ("Email: a@x → b@y"). The
// codes the program stores (order.refund, refund_pending, staff_refund) never reach
// the page: a code without wording of its own is written as words too.
//
// It imports money and zone only.
package audittext

import (
	"encoding/json"
	"strings"
	"time"

	"boxoffice/internal/money"
	"boxoffice/internal/zone"
)

// Entry is one audit entry as stored: its action code, who did it (empty: the
// system), when, and the record before and after as JSON ("" for none).
type Entry struct {
	Action, Subject, Who string
	At                   time.Time
	Before, After        string
}

// Change is one field of a record that an action set or changed: Before is "" when
// the action set it, After "" when the record after does not have the field.
type Change struct {
	Field, Before, After string
}

// Words writes audit entries and codes in the shop's money and a zone's clocks.
type Words struct {
	Money money.Shop
	Zone  *time.Location
}

// actions are the audit log's actions in words.
var actions = map[string]string{
	"order.refund":          "Refunded",
	"order.void":            "Voided (no money back)",
	"order.resend":          "Confirmation sent again",
	"order.link_revoke":     "Access link revoked",
	"order.link_resend":     "Access link revoked and a new one sent",
	"boxoffice.sale":        "Sold at the box office",
	"hold.create":           "Seats held",
	"hold.release":          "Held seats released",
	"ticket.checkin":        "Checked in",
	"event.create":          "Event created",
	"event.update":          "Event changed",
	"event.publish":         "Event published",
	"event.unpublish":       "Event taken off the public pages",
	"event.export_orders":   "Orders exported",
	"event.export_checkins": "Check-ins exported",
	"venue.create":          "Venue created",
	"venue.update":          "Venue changed",
	"staff.add":             "Account added",
	"staff.role":            "Role changed",
	"staff.enable":          "Account enabled",
	"staff.disable":         "Account disabled",
	"staff.login":           "Logged in",
	"staff.logout":          "Logged out",
	"queue.pause":           "Waiting room paused",
	"queue.resume":          "Waiting room resumed",
	"queue.rate":            "Admission rate changed",
	"queue.slots":           "Shoppers at a time changed",
}

// Action says an action code in words: "order.refund" is "Refunded"; a code with no
// wording of its own is its words ("order.split_seats": "Order: split seats").
func Action(code string) string {
	if a, ok := actions[code]; ok {
		return a
	}
	noun, verb, ok := strings.Cut(code, ".")
	if !ok {
		return Code(code)
	}
	return Code(noun) + ": " + strings.ToLower(Code(verb))
}

// Sentence says an entry in one line: what was done, by whom, when, and the gist in
// brackets ("Refunded by Anna at 5 Jan 2027, 14:03 CET (€40.50, 2 tickets)").
func (w Words) Sentence(e Entry) string {
	who := e.Who
	if who == "" {
		who = "the system"
	}
	s := Action(e.Action) + " by " + who + " at " + zone.Short(e.At, w.Zone)
	if g := w.gist(e); g != "" {
		s += " (" + g + ")"
	}
	return s
}

// gist is the few words an action is mostly about.
func (w Words) gist(e Entry) string {
	after := object(e.After)
	var parts []string
	add := func(key string) {
		if v, ok := after[key]; ok && v != nil && v != "" {
			parts = append(parts, w.value(key, v))
		}
	}
	switch e.Action {
	case "order.refund":
		add("amount_cents")
		if t, ok := after["tickets"].([]any); ok {
			parts = append(parts, count(len(t), "ticket"))
		}
	case "order.void":
		if t, ok := after["tickets"].([]any); ok {
			parts = append(parts, count(len(t), "ticket"))
		}
	case "boxoffice.sale":
		add("method")
		add("amountCents")
	case "ticket.checkin":
		if g, ok := after["gate"].(string); ok && g != "" {
			parts = append(parts, "gate "+g)
		}
	case "hold.create":
		add("reason")
	}
	return strings.Join(parts, ", ")
}

func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return itoa(n) + " " + noun + "s"
}

// Changes lists the fields an action set or changed, in a steady order (known fields
// first, then by name): a field the same before and after is left out; an action that
// only created something lists what it set.
func (w Words) Changes(before, after string) []Change {
	b, a := object(before), object(after)
	var keys []string
	for k := range a {
		keys = append(keys, k)
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	sortKeys(keys)
	var out []Change
	for _, k := range keys {
		if hidden[k] {
			continue
		}
		bv, inB := b[k]
		av, inA := a[k]
		c := Change{Field: Field(k)}
		if inB {
			c.Before = w.value(k, bv)
		}
		if inA {
			c.After = w.value(k, av)
		}
		if inB && c.Before == c.After {
			continue
		}
		out = append(out, c)
	}
	return out
}

// object reads a JSON object; anything else (no record, a bare value) is read as one
// field named "value" so that it is still shown as words.
func object(s string) map[string]any {
	if strings.TrimSpace(s) == "" || s == "null" {
		return nil
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err == nil {
		return m
	}
	var v any
	if err := json.Unmarshal([]byte(s), &v); err == nil {
		return map[string]any{"value": v}
	}
	return map[string]any{"value": s}
}

// Subject names what an entry is about: "order 42" and "venue:3" are "Order 42" and
// "Venue 3"; an id alone stays as it is.
func Subject(s string) string {
	noun, id, ok := strings.Cut(s, ":")
	if !ok {
		noun, id, ok = strings.Cut(s, " ")
	}
	if !ok || noun == "" || strings.ContainsAny(noun, "0123456789") {
		return s
	}
	return Code(noun) + " " + strings.TrimSpace(id)
}
