// Package ticketpdf writes an order's tickets as a PDF, one ticket to an A4 page: the
// event, when and where, the place the ticket admits to, the order and the ticket's
// code, and its QR code as an image. It uses codeberg.org/go-pdf/fpdf, with DejaVu
// Sans embedded (a subset of the glyphs used), so that names in any European script
// print as typed.
package ticketpdf

import (
	"bytes"
	_ "embed"
	"fmt"
	"io"
	"strconv"

	"codeberg.org/go-pdf/fpdf"

	"boxoffice/internal/qrimage"
	"boxoffice/views"
)

// dejaVuSans is the font every text is set in; its licence is font/LICENSE.
//
//go:embed font/DejaVuSans.ttf
var dejaVuSans []byte

// Document is an order's tickets, worded for people (the caller formats the time in
// the event's venue's zone: ordertext.When).
type Document struct {
	Event string
	When  string
	Venue string
	Order string // "Order 42"
	// Tickets are the order's valid tickets; none makes no document.
	Tickets []Ticket
}

// Ticket is one ticket of the document.
type Ticket struct {
	Label string // "Ticket 1 of 2"
	Code  string
	Place []views.TicketField // section, row and seat; or the general-admission tier
	// Type is the ticket's type and what it cost ("Child, €14.25"); empty for an
	// order made before orders were itemised.
	Type string
}

// The page, in millimetres.
const (
	margin   = 20.0
	width    = 210.0 - 2*margin
	qrSide   = 70.0
	qrPixels = 420 // 150 dpi at qrSide: sharp on paper
	font     = "DejaVu"
)

// Write writes d as a PDF to w, one page a ticket.
func Write(w io.Writer, d Document) error {
	if len(d.Tickets) == 0 {
		return fmt.Errorf("ticketpdf: no tickets")
	}
	pdf := fpdf.New("P", "mm", "A4", "")
	pdf.SetMargins(margin, margin, margin)
	// A ticket is one page whatever its texts: nothing may flow onto a page of its own.
	pdf.SetAutoPageBreak(false, 0)
	pdf.AddUTF8FontFromBytes(font, "", dejaVuSans)
	pdf.SetTitle("Tickets: "+d.Event, true)
	pdf.SetCreator("boxoffice", true)
	for i, t := range d.Tickets {
		png, err := qrimage.PNG(t.Code, qrPixels)
		if err != nil {
			return fmt.Errorf("ticketpdf: QR code of ticket %d: %w", i+1, err)
		}
		name := "qr-" + strconv.Itoa(i)
		pdf.RegisterImageOptionsReader(name, fpdf.ImageOptions{ImageType: "PNG"}, bytes.NewReader(png))
		page(pdf, d, t, name)
	}
	if err := pdf.Error(); err != nil {
		return fmt.Errorf("ticketpdf: %w", err)
	}
	return pdf.Output(w)
}

// page sets one ticket on a page of its own.
func page(pdf *fpdf.Fpdf, d Document, t Ticket, qr string) {
	pdf.AddPage()
	muted := func() { pdf.SetTextColor(90, 90, 90) }
	plain := func() { pdf.SetTextColor(0, 0, 0) }

	muted()
	pdf.SetFont(font, "", 10)
	pdf.CellFormat(width, 6, "boxoffice · "+t.Label, "", 1, "L", false, 0, "")
	plain()
	pdf.Ln(2)
	pdf.SetFont(font, "", 22)
	lines := pdf.SplitText(d.Event, width)
	if len(lines) > 3 { // a name beyond three lines is cut, never pushed off the page
		lines = append(lines[:2], lines[2]+"…")
	}
	for _, l := range lines {
		pdf.CellFormat(width, 10, l, "", 1, "L", false, 0, "")
	}
	pdf.Ln(1)
	pdf.SetFont(font, "", 13)
	pdf.CellFormat(width, 7, d.When, "", 1, "L", false, 0, "")
	pdf.CellFormat(width, 7, d.Venue, "", 1, "L", false, 0, "")
	pdf.Ln(4)
	y := pdf.GetY()
	pdf.SetDrawColor(160, 160, 160)
	pdf.Line(margin, y, margin+width, y)

	top := y + 6
	pdf.ImageOptions(qr, margin+width-qrSide, top, qrSide, qrSide, false, fpdf.ImageOptions{ImageType: "PNG"}, 0, "")
	pdf.SetXY(margin, top)
	for _, f := range t.Place {
		field(pdf, f.Label, f.Value, 18)
	}
	if t.Type != "" {
		field(pdf, "Ticket", t.Type, 13)
	}
	field(pdf, "Order", d.Order, 13)
	field(pdf, "Ticket code", t.Code, 11)

	pdf.SetXY(margin, top+qrSide+10)
	muted()
	pdf.SetFont(font, "", 10)
	pdf.MultiCell(width, 5, "Show this ticket's QR code at the door, printed or on a screen. "+
		"Each ticket admits one person, once: keep it to yourself.", "", "L", false)
	plain()
}

// field sets a label and its value under it, in the column left of the QR code.
func field(pdf *fpdf.Fpdf, label, value string, size float64) {
	col := width - qrSide - 8
	pdf.SetTextColor(90, 90, 90)
	pdf.SetFont(font, "", 9)
	pdf.CellFormat(col, 5, label, "", 1, "L", false, 0, "")
	pdf.SetTextColor(0, 0, 0)
	pdf.SetFont(font, "", size)
	for _, l := range pdf.SplitText(value, col) {
		pdf.CellFormat(col, size*0.45, l, "", 1, "L", false, 0, "")
	}
	pdf.Ln(2)
}
