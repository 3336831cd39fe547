// Package mail writes and sends the buyer's emails: the order confirmation with its
// tickets and the refund notice. Sending is SMTP through wneessen/go-mail; without a
// server (SMTP_URL unset) every email is written to the log instead, so a checkout runs
// without one.
//
// The emails are built from booking.Receipt by Confirmation and Refund (compose.go);
// their HTML is a templ component (views/mail.templ), as the pages are, so that every
// text from a buyer or an organiser is escaped by the same generator, and their plain
// text is written here from the same view model (text.go).
//
// Sending is not transactional: a server that accepted an email cannot be asked to
// forget it. The job that sends (internal/jobs) claims the email in PostgreSQL
// (sent_mail) before sending and records it as sent right after the server accepts
// it, so a job run again sends nothing more; and each email's Message-ID is the same
// every time it is made for the same order (and refund), so the one duplicate still
// possible (a crash between the server's acceptance and that record) is recognisably
// the same message, which the receiving side can drop by its Message-ID.
//
// It imports booking (the receipt it words), ordertext and views (the emails' words and
// templates) and zone (times on the venue's clocks), never web or the generated queries.
package mail

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	gomail "github.com/wneessen/go-mail"
)

// Config is the mail server and the sender. A Config without Host sends nothing and
// logs every email instead.
type Config struct {
	Host        string
	Port        int
	ImplicitTLS bool // TLS from the first byte (smtps)
	RequireTLS  bool // STARTTLS or fail; otherwise STARTTLS when offered
	Username    string
	Password    string
	From        string // "Box office <tickets@example.com>"
	// Timeout bounds connecting and each command; zero means 15 seconds. The job's
	// context bounds the whole.
	Timeout time.Duration
}

// Message is one email, ready to send.
type Message struct {
	To      string
	Subject string
	// ID is the Message-ID without its angle brackets. It is derived from the order
	// and the kind of email, never random: see the package comment.
	ID string
	// OrderID is the order the email is about: the sending job records it with ID.
	OrderID int64
	// Unlogged keeps the address out of the log-only mode's line: addresses that
	// buyers register to be verified are never logged.
	Unlogged bool
	Text     string
	HTML     string
	Inline   []Inline // images the HTML shows through "cid:" addresses
}

// Inline is an image attached to an email and shown in its HTML part.
type Inline struct {
	ContentID   string // without angle brackets; the HTML refers to "cid:" + ContentID
	Name        string // a file name, for mail programs that list it
	ContentType string
	Data        []byte
}

// ErrPermanent marks a failure that sending again cannot fix: an address the server
// or we refuse. The job that sends stops retrying on it.
var ErrPermanent = errors.New("permanent mail failure")

// Mailer sends email through one SMTP server, or logs it when there is none. It is
// safe for concurrent use: each Send has a connection of its own.
type Mailer struct {
	client *gomail.Client // nil: log only
	from   string
	log    *slog.Logger
}

// New makes a Mailer. It does not connect: a mail server that is down delays the
// emails (their jobs retry), never the program's start.
func New(cfg Config, log *slog.Logger) (*Mailer, error) {
	m := &Mailer{from: cfg.From, log: log}
	if cfg.Host == "" {
		return m, nil
	}
	timeout := cfg.Timeout
	if timeout <= 0 {
		timeout = 15 * time.Second
	}
	opts := []gomail.Option{gomail.WithPort(cfg.Port), gomail.WithTimeout(timeout)}
	switch {
	case cfg.ImplicitTLS:
		opts = append(opts, gomail.WithSSL())
	case cfg.RequireTLS:
		opts = append(opts, gomail.WithTLSPolicy(gomail.TLSMandatory))
	default:
		opts = append(opts, gomail.WithTLSPolicy(gomail.TLSOpportunistic))
	}
	if cfg.Username != "" {
		opts = append(opts, gomail.WithSMTPAuth(gomail.SMTPAuthAutoDiscover),
			gomail.WithUsername(cfg.Username), gomail.WithPassword(cfg.Password))
	}
	c, err := gomail.NewClient(cfg.Host, opts...)
	if err != nil {
		return nil, fmt.Errorf("mail client: %w", err)
	}
	m.client = c
	return m, nil
}

// Sends reports whether Send reaches a mail server (rather than the log).
func (m *Mailer) Sends() bool { return m.client != nil }

// Send hands msg to the mail server and returns once the server has accepted it. An
// error wrapping ErrPermanent will not go away by sending again.
func (m *Mailer) Send(ctx context.Context, msg Message) error {
	gm, err := m.build(msg)
	if err != nil {
		return err
	}
	if m.client == nil {
		// Not the text: a confirmation carries the tickets' codes, which let people in,
		// and logs are read by more people than the buyer.
		to := msg.To
		if msg.Unlogged {
			to = "(not logged)"
		}
		m.log.InfoContext(ctx, "email not sent (SMTP_URL is not set)",
			"to", to, "subject", msg.Subject, "message_id", msg.ID)
		return nil
	}
	if err := m.client.DialAndSendWithContext(ctx, gm); err != nil {
		var se *gomail.SendError
		if errors.As(err, &se) && !se.IsTemp() && se.Reason == gomail.ErrSMTPRcptTo {
			return fmt.Errorf("send email %s: %w: %w", msg.ID, ErrPermanent, err)
		}
		return fmt.Errorf("send email %s: %w", msg.ID, err)
	}
	return nil
}

// build turns msg into go-mail's message: text, with the HTML as its alternative and
// the images related to the HTML.
func (m *Mailer) build(msg Message) (*gomail.Msg, error) {
	gm := gomail.NewMsg()
	if err := gm.From(m.from); err != nil {
		return nil, fmt.Errorf("sender %q: %w", m.from, err)
	}
	if err := gm.To(msg.To); err != nil {
		return nil, fmt.Errorf("recipient of email %s: %w: %w", msg.ID, ErrPermanent, err)
	}
	gm.Subject(msg.Subject)
	gm.SetMessageIDWithValue(msg.ID)
	gm.SetDate()
	gm.SetBodyString(gomail.TypeTextPlain, msg.Text)
	if msg.HTML != "" {
		gm.AddAlternativeString(gomail.TypeTextHTML, msg.HTML)
	}
	for _, in := range msg.Inline {
		if err := gm.EmbedReader(in.Name, bytes.NewReader(in.Data),
			gomail.WithFileContentID("<"+in.ContentID+">"),
			gomail.WithFileContentType(gomail.ContentType(in.ContentType))); err != nil {
			return nil, fmt.Errorf("image %s of email %s: %w", in.Name, msg.ID, err)
		}
	}
	return gm, nil
}
