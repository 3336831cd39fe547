// Package verification keeps the verified buyers of onsales that ask for them (an
// event's verified_only): a buyer registers an email for the event, is sent a link,
// and opening the link confirms the address and binds it to the buyer's session.
// Every session that confirms one address takes the address's buyer id, so the
// waiting room's place (keyed by the buyer id) and the per-buyer limit (counted by
// buyer id in the hold statements) are one per address, however many sessions or
// browsers ask.
//
// Addresses are stored normalised (trimmed, lower-case) in PostgreSQL and are never
// logged: the link email's job carries ids only, and a sending error names no address.
//
// It imports the generated queries (internal/db), keyring, mail and zone, never booking
// or web: booking sees a confirmed address only as a buyer id.
package verification

import (
	"cmp"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"net/mail"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"boxoffice/internal/db"
	"boxoffice/internal/dberr"
	"boxoffice/internal/keyring"
	boxmail "boxoffice/internal/mail"
	"boxoffice/internal/zone"
)

// Errors.
var (
	// ErrInvalidEmail: the text is not one email address.
	ErrInvalidEmail = errors.New("verification: not an email address")
	// ErrInvalidLink wraps every reason a link is refused by its signature: forged,
	// altered, cut short, signed by a key no longer configured.
	ErrInvalidLink = errors.New("verification: invalid link")
	// ErrLinkOver: a genuine link that no longer works: used already, past its end, or
	// replaced by a later link to the same address.
	ErrLinkOver = errors.New("verification: link used or expired")
)

// MaxEmail is the longest address accepted (RFC 5321's path limit).
const MaxEmail = 254

// Key is one HMAC key; the first of a service's keys signs links, the others still
// verify until removed.
type Key = keyring.Key

// Jobs queues the link emails.
type Jobs interface {
	// VerificationLink queues, in tx, the email carrying the link of a registration;
	// link numbers the registration's links, so that each is an email of its own.
	VerificationLink(ctx context.Context, tx pgx.Tx, eventID, emailID int64, link int) error
}

// Options tune a Service; zero values take defaults.
type Options struct {
	// LinkTTL is how long a link works (default a day: long enough to find the email,
	// short enough that an old link in a mailbox is no key for long).
	LinkTTL time.Duration
	// Gap is the least time between two links to one address for one event (default a
	// minute), and MaxLinks the most links a registration is sent (default 10): a
	// stranger registering someone else's address can send them only so much mail.
	Gap      time.Duration
	MaxLinks int
}

// Service registers and confirms buyers' addresses. It is safe for concurrent use.
type Service struct {
	pool      *pgxpool.Pool
	keys      []Key
	verifiers map[string][]byte
	jobs      Jobs
	opt       Options
}

// New returns the service over pool. keys[0] signs links. It panics without a key or
// with a key lacking an id or secret: a configuration error to catch at start.
func New(pool *pgxpool.Pool, keys []Key, opt Options) *Service {
	ver := keyring.Verifiers("verification", keys)
	opt.LinkTTL = cmp.Or(opt.LinkTTL, 24*time.Hour)
	opt.Gap = cmp.Or(opt.Gap, time.Minute)
	opt.MaxLinks = cmp.Or(opt.MaxLinks, 10)
	return &Service{pool: pool, keys: keys, verifiers: ver, opt: opt}
}

// SetJobs gives the service the queue its link emails go on; it is set once, before
// the first Register.
func (s *Service) SetJobs(j Jobs) { s.jobs = j }

// Normalise is the address as it is stored: trimmed and lower-case, a bare address
// (no display name, no comments). Anything else is ErrInvalidEmail.
func Normalise(email string) (string, error) {
	e := strings.ToLower(strings.TrimSpace(email))
	if e == "" || len(e) > MaxEmail {
		return "", ErrInvalidEmail
	}
	a, err := mail.ParseAddress(e)
	if err != nil || a.Address != e || a.Name != "" || !strings.Contains(e[strings.LastIndexByte(e, '@')+1:], ".") {
		return "", ErrInvalidEmail
	}
	return e, nil
}

// Register registers email for the event's onsale and sends it a link, unless one
// went to it within Options.Gap or it has had Options.MaxLinks. It says nothing of
// which happened, nor whether the address was registered or confirmed before: the
// caller's answer must be the same for every address. An address that is not one is
// ErrInvalidEmail.
func (s *Service) Register(ctx context.Context, eventID int64, email string) error {
	addr, err := Normalise(email)
	if err != nil {
		return err
	}
	nonce := make([]byte, nonceSize)
	_, _ = rand.Read(nonce) // never fails (Go 1.24+)
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		q := db.New(tx)
		id, err := q.BuyerEmailUpsert(ctx, addr)
		if err != nil {
			return err
		}
		n, err := q.RegistrationLink(ctx, db.RegistrationLinkParams{
			EventID: eventID, EmailID: id, Nonce: nonce, TtlSeconds: s.opt.LinkTTL.Seconds(),
			GapSeconds: s.opt.Gap.Seconds(), MaxLinks: int32(s.opt.MaxLinks),
		})
		if errors.Is(err, pgx.ErrNoRows) {
			return nil // registered, and a link went out lately or too often: none now
		} else if err != nil {
			return err
		}
		return s.jobs.VerificationLink(ctx, tx, eventID, id, int(n))
	})
	return dberr.Translate(err)
}

// LinkMail is the email carrying a registration's current link. A registration whose
// link was used has nothing to send: ErrLinkOver.
func (s *Service) LinkMail(ctx context.Context, eventID, emailID int64, site boxmail.Site) (boxmail.Message, error) {
	r, err := db.New(s.pool).RegistrationLinkGet(ctx, db.RegistrationLinkGetParams{EventID: eventID, EmailID: emailID})
	if errors.Is(err, pgx.ErrNoRows) {
		return boxmail.Message{}, fmt.Errorf("%w: no registration %d of event %d", ErrLinkOver, emailID, eventID)
	} else if err != nil {
		return boxmail.Message{}, dberr.Translate(err)
	}
	if r.LinkNonce == nil || r.LinkExpiresAt == nil || !time.Now().Before(*r.LinkExpiresAt) {
		return boxmail.Message{}, fmt.Errorf("%w: registration %d of event %d has no working link", ErrLinkOver, emailID, eventID)
	}
	tok := s.sign(link{eventID: eventID, emailID: emailID, expires: *r.LinkExpiresAt, nonce: r.LinkNonce})
	return boxmail.Verification(boxmail.VerificationLink{
		To: r.Email, EventID: eventID, EventName: r.EventName, EmailID: emailID, Link: int(r.LinksSent),
		URL: strings.TrimRight(site.BaseURL, "/") + "/verify?token=" + tok, Expires: *r.LinkExpiresAt, Zone: zone.Of(r.TimeZone),
	}, site), nil
}

// EventOf is the event a link is for, by its signature alone (the confirmation page
// names it before the buyer confirms). A link refused by its signature is
// ErrInvalidLink.
func (s *Service) EventOf(token string) (int64, error) {
	l, err := s.parse(token)
	return l.eventID, err
}

// Confirmed is a confirmation: the event, and the buyer id the confirming session
// takes (the address's).
type Confirmed struct {
	EventID int64
	Buyer   string
}

// Confirm confirms the registration a link names, once: the link is used up by the
// one conditional statement that confirms (its row is the verdict), so two opening it
// at once confirm once. buyer is the confirming session's buyer id, which becomes the
// address's if it has none yet. A link refused by its signature is ErrInvalidLink;
// one used, past its end or replaced by a later one is ErrLinkOver.
func (s *Service) Confirm(ctx context.Context, token, buyer string) (Confirmed, error) {
	l, err := s.parse(token)
	if err != nil {
		return Confirmed{}, err
	}
	if buyer == "" {
		return Confirmed{}, errors.New("verification: confirm without a buyer")
	}
	if !time.Now().Before(l.expires) {
		return Confirmed{}, fmt.Errorf("%w: ended at %s", ErrLinkOver, l.expires.UTC().Format(time.RFC3339))
	}
	out := Confirmed{EventID: l.eventID}
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		q := db.New(tx)
		_, err := q.RegistrationConfirm(ctx, db.RegistrationConfirmParams{EventID: l.eventID, EmailID: l.emailID, Nonce: l.nonce})
		if errors.Is(err, pgx.ErrNoRows) {
			return ErrLinkOver
		} else if err != nil {
			return err
		}
		out.Buyer, err = q.BuyerEmailBind(ctx, db.BuyerEmailBindParams{ID: l.emailID, Buyer: buyer})
		return err
	})
	if err != nil {
		return Confirmed{}, dberr.Translate(err)
	}
	return out, nil
}

// Counts are an onsale's registrations, for the box office.
type Counts struct {
	Registered int // addresses registered
	Confirmed  int // of which confirmed through their link
}

// Counts says how many addresses registered for the event's onsale and confirmed.
func (s *Service) Counts(ctx context.Context, eventID int64) (Counts, error) {
	r, err := db.New(s.pool).RegistrationCounts(ctx, eventID)
	if err != nil {
		return Counts{}, dberr.Translate(err)
	}
	return Counts{Registered: int(r.Registered), Confirmed: int(r.Confirmed)}, nil
}
