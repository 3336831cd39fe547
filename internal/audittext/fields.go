package audittext

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"boxoffice/internal/zone"
)

// fields are the records' field names in words, in the order they are listed.
var fields = []struct{ key, label string }{
	{"status", "Status"}, {"kind", "What"}, {"email", "Email"}, {"name", "Name"}, {"buyerName", "Buyer"},
	{"role", "Role"}, {"disabled", "Disabled"}, {"method", "Paid by"},
	{"amount_cents", "Amount"}, {"amountCents", "Amount"},
	{"valid_tickets", "Valid tickets"}, {"tickets", "Tickets"}, {"seats", "Seats"}, {"seatIds", "Seats"},
	{"ga_places", "Standing places"}, {"gaQuantity", "Standing places"}, {"gaTierId", "Standing area"},
	{"refund_id", "Refund"}, {"orderId", "Order"}, {"order", "Order"},
	{"checked_in_at", "Checked in"}, {"gate", "Gate"}, {"link_version", "Link version"},
	{"reason", "Reason"}, {"releaseAt", "Released at"}, {"released", "Released"},
	{"slug", "Address"}, {"venueId", "Venue"}, {"startsAt", "Starts"}, {"onsaleAt", "On sale"},
	{"salesCloseAt", "Sales close"}, {"holdMinutes", "Hold minutes"}, {"published", "Published"},
	{"queue", "Waiting room"}, {"queueSlots", "Shoppers at a time"}, {"queueRate", "Admissions a second"},
	{"queueTokenTtlSeconds", "Admission lasts (seconds)"}, {"queueIdleSeconds", "Idle turn lapses after (seconds)"},
	{"verifiedOnly", "Verified buyers only"}, {"city", "City"}, {"timeZone", "Time zone"},
	{"sections", "Sections"}, {"standing", "Standing places"}, {"rate", "Admissions a second"},
	{"slots", "Shoppers at a time"}, {"paused", "Paused"},
}

// hidden are fields kept for the record that say nothing to a person: the random id
// of a resend request.
var hidden = map[string]bool{"request": true}

// Field says a record's field name in words: "valid_tickets" is "Valid tickets"; a
// name with no wording of its own is its words ("queueTokenTtl": "Queue token ttl").
func Field(key string) string {
	for _, f := range fields {
		if f.key == key {
			return f.label
		}
	}
	return Code(key)
}

// sortKeys puts known fields first, in the order of fields, then the rest by name.
func sortKeys(keys []string) {
	rank := func(k string) int {
		for i, f := range fields {
			if f.key == k {
				return i
			}
		}
		return len(fields)
	}
	slices.SortFunc(keys, func(a, b string) int {
		if ra, rb := rank(a), rank(b); ra != rb {
			return ra - rb
		}
		return strings.Compare(a, b)
	})
}

// Code writes a code as words: "refund_pending" is "Refund pending", "gaQuantity" is
// "Ga quantity", "event.export_orders" is "Event export orders".
func Code(code string) string {
	var b strings.Builder
	prev := ' '
	for _, r := range code {
		switch {
		case r == '_' || r == '.' || r == '-' || r == ':':
			r = ' '
		case unicode.IsUpper(r) && unicode.IsLower(prev):
			b.WriteRune(' ')
		}
		if r == ' ' && prev == ' ' {
			continue
		}
		b.WriteRune(unicode.ToLower(r))
		prev = r
	}
	s := strings.TrimSpace(b.String())
	if s == "" {
		return ""
	}
	rs := []rune(s)
	rs[0] = unicode.ToUpper(rs[0])
	return string(rs)
}

// maxListed bounds the items of a list written out; the rest are counted.
const maxListed = 8

// value writes a field's value: amounts in the shop's money, moments on the zone's
// clocks, states and roles in words, lists with their items.
func (w Words) value(key string, v any) string {
	switch x := v.(type) {
	case nil:
		return "none"
	case bool:
		if x {
			return "yes"
		}
		return "no"
	case float64:
		if strings.HasSuffix(key, "Cents") || strings.HasSuffix(key, "_cents") {
			return w.Money.Format(int(x))
		}
		return strconv.FormatFloat(x, 'f', -1, 64)
	case string:
		return w.text(key, x)
	case []any:
		if len(x) == 0 {
			return "none"
		}
		var parts []string
		for i, e := range x {
			if i == maxListed {
				parts = append(parts, fmt.Sprintf("and %d more", len(x)-maxListed))
				break
			}
			parts = append(parts, w.value(key, e))
		}
		return strings.Join(parts, ", ")
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sortKeys(keys)
		var parts []string
		for _, k := range keys {
			parts = append(parts, Field(k)+" "+w.value(k, x[k]))
		}
		return strings.Join(parts, ", ")
	}
	return fmt.Sprint(v)
}

// text writes a string field: a code for a state, a role or a kind in words, a
// moment on the zone's clocks, anything else as it is.
func (w Words) text(key, s string) string {
	switch key {
	case "status":
		return Status(s)
	case "role":
		return Role(s)
	case "kind", "method", "reason":
		if r, ok := reasons[s]; ok {
			return r
		}
		return strings.ToLower(Code(s))
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return shortTime(t, w)
	}
	if s == "" {
		return "none"
	}
	return s
}

func shortTime(t time.Time, w Words) string {
	if t.IsZero() {
		return "none"
	}
	return zone.Short(t, w.Zone)
}

// statuses are the orders' and payments' states in words.
var statuses = map[string]string{
	"pending":        "Awaiting payment",
	"confirmed":      "Paid",
	"refund_pending": "Refund under way",
	"refunded":       "Refunded",
	"expired":        "Expired unpaid",
	"succeeded":      "Succeeded",
	"failed":         "Failed",
	"unknown":        "Outcome unknown",
	"processing":     "Processing",
}

// Status says an order's (or a payment's or refund's) state in words: "confirmed" is
// "Paid", "refund_pending" "Refund under way".
func Status(code string) string {
	if s, ok := statuses[code]; ok {
		return s
	}
	return Code(code)
}

// reasons are the reasons booking records on orders and refunds, and the kinds of a
// staff refund, in words.
var reasons = map[string]string{
	"payment_processing": "the payment is being processed",
	"payment_unknown":    "the payment's outcome is being checked",
	"payment_failed":     "the payment failed; the buyer may pay again",
	"hold_lapsed":        "the hold ran out unpaid",
	"seats_unavailable":  "the hold ran out and its seats were sold",
	"sold_out":           "the hold ran out and its places were sold",
	"buyer_limit":        "it would take the buyer past the limit per buyer",
	"presale_quota":      "the presale code's places were all taken",
	"amount_mismatch":    "the amount paid was not the order's",
	"order_expired":      "paid after the order had expired",
	"already_paid":       "a second payment for a paid order",
	"other_payment":      "a payment made while another was under way",
	"order_closed":       "paid after the order had closed",
	"staff_refund":       "refunded by the box office",
	"voided":             "voided by the box office, no money back",
	"refund":             "refund",
	"void":               "void, no money back",
}

// Reason says why an order is in its state, in words ("staff_refund": "refunded by
// the box office"); "" for none.
func Reason(code string) string {
	if code == "" {
		return ""
	}
	if r, ok := reasons[code]; ok {
		return r
	}
	return strings.ToLower(Code(code))
}

// roles are the staff roles in words.
var roles = map[string]string{"admin": "Admin", "box_office": "Box office", "door": "Door"}

// Role says a staff role in words.
func Role(code string) string {
	if r, ok := roles[code]; ok {
		return r
	}
	return Code(code)
}

func itoa(n int) string { return strconv.Itoa(n) }
