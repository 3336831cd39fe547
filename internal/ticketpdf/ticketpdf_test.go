package ticketpdf

import (
	"bytes"
	"strings"
	"testing"

	"boxoffice/internal/ticketpdf/pdftest"
	"boxoffice/views"
)

// TestWrite: one page per ticket, each with one QR image at the size drawn and the
// ticket's own texts, names in other scripts as typed (the embedded font covers them),
// and an event name too long for three lines cut rather than spilling onto a page of
// its own.
func TestWrite(t *testing.T) {
	t.Parallel()
	long := "Čajkovskij: Лебединое озеро, Ελληνικά, Straße " + strings.Repeat("and on ", 40)
	d := Document{
		Event: long, When: "Sat 14 Mar 2026, 19:30 UTC", Venue: "Große Halle, Zürich", Order: "Order 42",
		Tickets: []Ticket{
			{Label: "Ticket 1 of 3", Code: "BX-7-101-QWERTY", Place: []views.TicketField{{Label: "Section", Value: "Parkett links"}, {Label: "Row", Value: "Ä"}, {Label: "Seat", Value: "12"}}},
			{Label: "Ticket 2 of 3", Code: "BX-7-102-ASDFGH", Place: []views.TicketField{{Label: "Section", Value: "Parkett links"}, {Label: "Row", Value: "Ä"}, {Label: "Seat", Value: "13"}}},
			{Label: "Ticket 3 of 3", Code: "BX-7-103-ZXCVBN", Place: []views.TicketField{{Label: "Admission", Value: "Stehplatz (general admission)"}}},
		},
	}
	var b bytes.Buffer
	if err := Write(&b, d); err != nil {
		t.Fatal(err)
	}
	doc, err := pdftest.Read(b.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if doc.Pages != 3 || len(doc.Text) != 3 {
		t.Fatalf("got %d pages and %d with text, want 3 (one per ticket)", doc.Pages, len(doc.Text))
	}
	if len(doc.Images) != 3 || doc.Images[0] != qrPixels {
		t.Errorf("images: got widths %v, want 3 QR codes of %d px", doc.Images, qrPixels)
	}
	for i, tk := range d.Tickets {
		text := strings.ReplaceAll(doc.Text[i], "\n", " ") // lines wrap where they must
		want := []string{tk.Label, tk.Code, "Order 42", "Sat 14 Mar 2026, 19:30 UTC", "Große Halle, Zürich", "Čajkovskij: Лебединое озеро, Ελληνικά,"}
		for _, f := range tk.Place {
			want = append(want, f.Label, f.Value)
		}
		for _, w := range want {
			if !strings.Contains(text, w) {
				t.Errorf("page %d lacks %q:\n%s", i+1, w, text)
			}
		}
		if strings.Count(text, "and on") > 3*12 || !strings.Contains(text, "…") {
			t.Errorf("page %d: the long name is not cut to three lines:\n%s", i+1, text)
		}
		for _, other := range d.Tickets {
			if other.Code != tk.Code && strings.Contains(text, other.Code) {
				t.Errorf("page %d carries ticket %s's code too", i+1, other.Code)
			}
		}
	}
	if err := Write(&b, Document{Event: "x"}); err == nil {
		t.Error("a document without tickets: got no error")
	}
}
