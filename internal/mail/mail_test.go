package mail_test

import (
	"bytes"
	"errors"
	"image"
	_ "image/png" // decodes the QR codes
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"boxoffice/internal/booking"
	"boxoffice/internal/config"
	"boxoffice/internal/mail"
	"boxoffice/internal/mail/mailtest"
)

var site = mail.Site{BaseURL: "https://tickets.example.com", MaxPerBuyer: 6}

// receipt is a confirmed order of two seats and two standing places, for an event whose
// name a browser would read as markup.
func receipt(to string) booking.Receipt {
	return booking.Receipt{
		Order: booking.Order{
			ID: 42, EventID: 7, Email: to, Status: booking.StatusConfirmed, AmountCents: 123450,
			Seats: []booking.Seat{
				{ID: 11, Section: "Stalls", Row: "F", Number: 12, PriceCents: 45000},
				{ID: 12, Section: "Stalls", Row: "F", Number: 13, PriceCents: 45000},
			},
			GA: &booking.GAPlaces{TierID: 3, TierName: "Standing", Quantity: 2, PriceCents: 16725},
			Tickets: []booking.Ticket{
				{ID: 101, SeatID: 11, Code: "BX-7-101-QWERTY"},
				{ID: 102, SeatID: 12, Code: "BX-7-102-ASDFGH"},
				{ID: 103, GATierID: 3, Code: "BX-7-103-ZXCVBN"},
				{ID: 104, GATierID: 3, Code: "BX-7-104-POIUYT"},
			},
		},
		Event: booking.Event{
			ID: 7, Name: `<b>Hamlet</b> & "friends"`, Venue: "The Globe",
			StartsAt: time.Date(2026, 3, 14, 19, 30, 0, 0, time.UTC),
		},
	}
}

// TestConfirmation: one ticket per seat or place, each with its code in the text and
// its QR code as an attached PNG that the HTML shows; the event's name is escaped.
func TestConfirmation(t *testing.T) {
	t.Parallel()
	m, err := mail.Confirmation(receipt("ann@example.com"), site)
	if err != nil {
		t.Fatal(err)
	}
	if m.To != "ann@example.com" || m.ID != "order-42.confirmation@tickets.example.com" {
		t.Errorf("got to %q id %q, want ann@example.com and order-42.confirmation@tickets.example.com", m.To, m.ID)
	}
	if want := `Your tickets for <b>Hamlet</b> & "friends" (order 42)`; m.Subject != want {
		t.Errorf("subject: got %q, want %q", m.Subject, want)
	}
	for _, s := range []string{
		"Stalls, row F, seat 12  €450.00", "Standing (general admission) × 2  €334.50", "Total  €1,234.50",
		"Sat 14 Mar 2026, 19:30 UTC", "Ticket 4 of 4", "Admission: Standing (general admission)",
		"Code: BX-7-101-QWERTY", "Code: BX-7-104-POIUYT", "https://tickets.example.com/orders/42",
	} {
		if !strings.Contains(m.Text, s) {
			t.Errorf("text lacks %q:\n%s", s, m.Text)
		}
	}

	doc, err := goquery.NewDocumentFromReader(strings.NewReader(m.HTML))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(m.HTML, "<b>Hamlet") {
		t.Error("HTML carries the event name as markup, want it escaped")
	}
	if got := doc.Find("h1").Text(); got != `Your tickets for <b>Hamlet</b> & "friends"` {
		t.Errorf("heading: got %q", got)
	}
	if href, _ := doc.Find(`a[href^="https://"]`).Attr("href"); href != "https://tickets.example.com/orders/42" {
		t.Errorf("order link: got %q, want the order page", href)
	}
	imgs := doc.Find("img")
	if imgs.Length() != 4 || len(m.Inline) != 4 {
		t.Fatalf("got %d images and %d attached, want one per ticket (4)", imgs.Length(), len(m.Inline))
	}
	imgs.Each(func(i int, s *goquery.Selection) {
		src, _ := s.Attr("src")
		in := m.Inline[i]
		if src != "cid:"+in.ContentID {
			t.Errorf("image %d: got src %q, want cid:%s", i, src, in.ContentID)
		}
		cfg, format, err := image.DecodeConfig(bytes.NewReader(in.Data))
		if err != nil || format != "png" || cfg.Width != 360 {
			t.Errorf("image %d: got %s %dpx (%v), want a 360px PNG", i, format, cfg.Width, err)
		}
	})
}

// TestConfirmationOnlyWhenConfirmed: an order that is not confirmed has no tickets to
// send, whatever asked for them.
func TestConfirmationOnlyWhenConfirmed(t *testing.T) {
	t.Parallel()
	r := receipt("ann@example.com")
	r.Order.Status = booking.StatusRefunded
	if _, err := mail.Confirmation(r, site); err == nil {
		t.Error("got a confirmation of a refunded order, want an error")
	}
}

// TestRefundWords: the reason in plain words, and where the money stands.
func TestRefundWords(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		status, reason string
		refunded       []int // the order's refunds, in cents
		want           []string
	}{
		{booking.StatusRefunded, booking.ReasonSeatsUnavailable, nil, []string{"has been refunded", "sold to someone else", "€1,234.50 has been refunded in full"}},
		{booking.StatusRefunded, booking.ReasonBuyerLimit, nil, []string{"limit of 6 tickets per buyer"}},
		{booking.StatusRefunded, booking.ReasonAmountMismatch, []int{1000}, []string{"did not match the order's total", "€10.00 has been refunded"}},
		{booking.StatusRefunded, booking.ReasonOrderExpired, nil, []string{"after this order had expired"}},
		{booking.StatusRefunded, "something_new", nil, []string{"We could not complete this sale", "refunded in full"}},
		{booking.StatusRefundPending, booking.ReasonSoldOut, nil, []string{"will be refunded", "places were sold"}},
		{booking.StatusConfirmed, booking.ReasonAlreadyPaid, []int{500, 500}, []string{"A second payment has been refunded", "€10.00", "tickets are still valid"}},
	} {
		r := receipt("ann@example.com")
		r.Order.Status, r.Order.StatusReason = tc.status, tc.reason
		for _, c := range tc.refunded {
			r.Order.Refunds = append(r.Order.Refunds, booking.OrderRefund{AmountCents: c, Reason: tc.reason, Done: true})
		}
		m, err := mail.Refund(r, site)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range tc.want {
			if !strings.Contains(m.Text, s) || !strings.Contains(m.HTML, strings.ReplaceAll(s, "'", "&#39;")) {
				t.Errorf("%s/%s: text or HTML lacks %q:\n%s", tc.status, tc.reason, s, m.Text)
			}
		}
		if m.ID != "order-42.refund@tickets.example.com" || len(m.Inline) != 0 {
			t.Errorf("%s/%s: got id %q and %d images, want order-42.refund@… and none", tc.status, tc.reason, m.ID, len(m.Inline))
		}
	}
}

// TestPaymentRefund: the email about one refund of an order that stands says that the
// order stands and that this payment, of its own amount, came back; it names the
// refund in its Message-ID, so that each refund is one email; a refund the order does
// not have is an error the job gives up on.
func TestPaymentRefund(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		status, reason string
		want           []string
	}{
		{booking.StatusConfirmed, booking.ReasonAlreadyPaid, []string{"A second payment has been refunded", "already paid",
			"further payment of €4.50 for it has been refunded in full", "your order stands and your tickets are still valid"}},
		{booking.StatusPending, booking.ReasonOtherPayment, []string{"A further payment has been refunded", "while the first was still being processed",
			"€4.50 has been refunded in full", "Your order stands, with the payment you made first"}},
		{booking.StatusRefunded, booking.ReasonOrderClosed, []string{"after this order had closed", "€4.50 has been refunded in full"}},
	} {
		r := receipt("ann@example.com")
		r.Order.Status = tc.status
		r.Order.Refunds = []booking.OrderRefund{
			{ID: 8, AmountCents: 900, Reason: booking.ReasonAlreadyPaid, Done: true},
			{ID: 9, AmountCents: 450, Reason: tc.reason, Done: true},
		}
		m, err := mail.PaymentRefund(r, 9, site)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range tc.want {
			if !strings.Contains(m.Text, s) || !strings.Contains(m.HTML, s) {
				t.Errorf("%s/%s: text or HTML lacks %q:\n%s", tc.status, tc.reason, s, m.Text)
			}
		}
		if m.ID != "order-42.refund-9@tickets.example.com" || !strings.Contains(m.Subject, "Refund of a further payment for order 42") {
			t.Errorf("%s: got id %q subject %q, want order-42.refund-9@… and the further payment's subject", tc.status, m.ID, m.Subject)
		}
		if strings.Contains(m.Text, "€9.00") {
			t.Errorf("%s: the email speaks of the other refund's amount:\n%s", tc.status, m.Text)
		}
	}
	if _, err := mail.PaymentRefund(receipt("ann@example.com"), 9, site); !errors.Is(err, mail.ErrNoSuchRefund) {
		t.Errorf("a refund the order does not have: got %v, want ErrNoSuchRefund", err)
	}
}

// TestSend: the confirmation reaches a real SMTP server (mailpit) as one email, with
// its Message-ID, its text, its HTML and the QR codes inline.
func TestSend(t *testing.T) {
	t.Parallel()
	catcher := mailtest.New(t)
	to := mailtest.Address(t)
	m := mailer(t, catcher.SMTPURL)
	if !m.Sends() {
		t.Fatal("got a mailer that logs, want one that sends")
	}
	msg, err := mail.Confirmation(receipt(to), site)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Send(t.Context(), msg); err != nil {
		t.Fatal(err)
	}
	got := catcher.Wait(t, to, 1)
	if len(got) != 1 {
		t.Fatalf("got %d emails, want 1", len(got))
	}
	full, err := catcher.Message(t.Context(), got[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	if full.MessageID != msg.ID || full.Subject != msg.Subject || full.From.Address != "tickets@boxoffice.test" {
		t.Errorf("got id %q subject %q from %q, want %q, %q, tickets@boxoffice.test", full.MessageID, full.Subject, full.From.Address, msg.ID, msg.Subject)
	}
	if !strings.Contains(full.Text, "Code: BX-7-103-ZXCVBN") || !strings.Contains(full.HTML, "BX-7-103-ZXCVBN") {
		t.Errorf("text or HTML lost the ticket codes:\n%s", full.Text)
	}
	if len(full.Inline) != 4 {
		t.Fatalf("got %d inline parts, want the 4 QR codes", len(full.Inline))
	}
	for i, in := range full.Inline {
		if in.ContentID != msg.Inline[i].ContentID || in.ContentType != "image/png" {
			t.Errorf("inline %d: got %s %q, want image/png %q", i, in.ContentType, in.ContentID, msg.Inline[i].ContentID)
		}
	}
	png, err := catcher.Part(t.Context(), full.ID, full.Inline[0].PartID)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(png, msg.Inline[0].Data) {
		t.Error("the first QR code arrived changed")
	}
}

// TestSendRefusesBadAddress: an address no server could deliver to is a permanent
// failure, not one to retry.
func TestSendRefusesBadAddress(t *testing.T) {
	t.Parallel()
	m := mailer(t, "")
	msg, err := mail.Refund(receipt("not an address"), site)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Send(t.Context(), msg); !errors.Is(err, mail.ErrPermanent) {
		t.Errorf("got %v, want ErrPermanent", err)
	}
}

// TestLogOnly: without SMTP_URL an email is noted in the log, and nothing is sent; the
// log never holds a ticket's code, which would let whoever reads it in.
func TestLogOnly(t *testing.T) {
	t.Parallel()
	var logs bytes.Buffer
	m, err := mail.New(mail.Config{From: "tickets@boxoffice.test"}, slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	msg, err := mail.Confirmation(receipt("ann@example.com"), site)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Send(t.Context(), msg); err != nil {
		t.Fatal(err)
	}
	if m.Sends() || !strings.Contains(logs.String(), "SMTP_URL is not set") || !strings.Contains(logs.String(), msg.ID) {
		t.Errorf("got sends=%v and logs %q, want the email noted", m.Sends(), logs.String())
	}
	if strings.Contains(logs.String(), "BX-7-101-QWERTY") {
		t.Errorf("logs %q hold a ticket code, want none", logs.String())
	}
}

func mailer(t *testing.T, smtpURL string) *mail.Mailer {
	t.Helper()
	s, err := config.ParseSMTPURL(smtpURL)
	if err != nil {
		t.Fatal(err)
	}
	m, err := mail.New(mail.Config{
		Host: s.Host, Port: s.Port, ImplicitTLS: s.ImplicitTLS, RequireTLS: s.RequireTLS,
		Username: s.Username, Password: s.Password, From: "Box office <tickets@boxoffice.test>",
	}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	return m
}
