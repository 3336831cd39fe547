package audittext_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"boxoffice/internal/audittext"
	"boxoffice/internal/money"
	"boxoffice/internal/zone"
)

func TestSentence(t *testing.T) {
	t.Parallel()
	berlin := zone.Of("Europe/Berlin")
	w := audittext.Words{Money: money.Shop{}, Zone: berlin}
	at := time.Date(2027, 1, 5, 13, 3, 0, 0, time.UTC)
	for _, c := range []struct {
		e    audittext.Entry
		want string
	}{
		{audittext.Entry{Action: "order.refund", Who: "Anna", At: at, After: `{"status":"refunded","kind":"refund","tickets":[7,8],"amount_cents":4050}`},
			"Refunded by Anna at 5 Jan 2027, 14:03 CET (€40.50, 2 tickets)"},
		{audittext.Entry{Action: "boxoffice.sale", Who: "Ben", At: at, After: `{"method":"cash","amountCents":8000}`},
			"Sold at the box office by Ben at 5 Jan 2027, 14:03 CET (cash, €80.00)"},
		{audittext.Entry{Action: "staff.login", At: at}, "Logged in by the system at 5 Jan 2027, 14:03 CET"},
		{audittext.Entry{Action: "order.split_seats", Who: "Anna", At: at}, "Order: split seats by Anna at 5 Jan 2027, 14:03 CET"},
		{audittext.Entry{Action: "mystery", Who: "Anna", At: at}, "Mystery by Anna at 5 Jan 2027, 14:03 CET"},
	} {
		if got := w.Sentence(c.e); got != c.want {
			t.Errorf("Sentence(%s): got %q, want %q", c.e.Action, got, c.want)
		}
	}
}

func TestChanges(t *testing.T) {
	t.Parallel()
	w := audittext.Words{Zone: time.UTC}
	got := w.Changes(`{"email":"a@x","role":"door","disabled":false,"name":"Anna"}`,
		`{"email":"b@y","role":"box_office","disabled":false,"name":"Anna","nickname":"Annie"}`)
	want := []audittext.Change{
		{Field: "Email", Before: "a@x", After: "b@y"},
		{Field: "Role", Before: "Door", After: "Box office"},
		{Field: "Nickname", After: "Annie"},
	}
	if !slices.Equal(got, want) {
		t.Errorf("changes: got %+v, want %+v", got, want)
	}
	refund := w.Changes(`{"status":"confirmed","valid_tickets":[1,2]}`,
		`{"status":"refund_pending","kind":"refund","tickets":[1,2],"amount_cents":9000,"refund_id":4,"request":"x1"}`)
	var lines []string
	for _, c := range refund {
		lines = append(lines, c.Field+": "+c.Before+" → "+c.After)
	}
	text := strings.Join(lines, "; ")
	for _, want := range []string{"Status: Paid → Refund under way", "Amount:  → €90.00", "Valid tickets: 1, 2 → ;", "What:  → refund"} {
		if !strings.Contains(text, want) {
			t.Errorf("refund changes %q: want %q among them", text, want)
		}
	}
	for _, raw := range []string{"{", "refund_pending", "amount_cents", "x1"} {
		if strings.Contains(text, raw) {
			t.Errorf("refund changes %q: want no %q", text, raw)
		}
	}
	if c := w.Changes("", `"plain"`); len(c) != 1 || c[0].After != "plain" {
		t.Errorf("a bare value: got %+v, want one change to plain", c)
	}
	long := w.Changes("", `{"seatIds":[1,2,3,4,5,6,7,8,9,10]}`)
	if len(long) != 1 || !strings.HasSuffix(long[0].After, "and 2 more") {
		t.Errorf("a long list: got %+v, want it cut after 8", long)
	}
}

func TestCodes(t *testing.T) {
	t.Parallel()
	for code, want := range map[string]string{
		"refund_pending": "Refund under way", "confirmed": "Paid", "brand_new_state": "Brand new state",
	} {
		if got := audittext.Status(code); got != want {
			t.Errorf("Status(%q) = %q, want %q", code, got, want)
		}
	}
	if got := audittext.Reason("staff_refund"); got != "refunded by the box office" {
		t.Errorf("Reason(staff_refund) = %q", got)
	}
	if got := audittext.Field("queueTokenTtl"); got != "Queue token ttl" {
		t.Errorf("Field(queueTokenTtl) = %q, want Queue token ttl", got)
	}
}
