package jobs

import (
	"context"
	"errors"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	"boxoffice/internal/mail"
	"boxoffice/internal/verification"
)

// VerificationEmail sends the link that confirms an address registered for an
// onsale. It carries ids only: addresses stay out of river_job, which operators read.
// Link numbers the registration's links, so that each new link is a job of its own.
type VerificationEmail struct {
	EventID int64 `json:"event_id" river:"unique"`
	EmailID int64 `json:"email_id" river:"unique"`
	Link    int   `json:"link" river:"unique"`
}

// Kind names the job in river_job.
func (VerificationEmail) Kind() string { return "verification_email" }

// InsertOpts makes the email one job per link for good (see emailOnce).
func (VerificationEmail) InsertOpts() river.InsertOpts {
	return emailOpts()
}

// Verifications is what the link emails need of the verification service.
type Verifications interface {
	LinkMail(ctx context.Context, eventID, emailID int64, site mail.Site) (mail.Message, error)
}

var _ verification.Jobs = (*Queue)(nil)

// VerificationLink queues a registration's link email, in tx.
func (q *Queue) VerificationLink(ctx context.Context, tx pgx.Tx, eventID, emailID int64, link int) error {
	return q.insert(ctx, tx, VerificationEmail{EventID: eventID, EmailID: emailID, Link: link})
}

// verificationWorker sends link emails.
type verificationWorker struct {
	river.WorkerDefaults[VerificationEmail]
	deps
}

// Work sends the registration's link as it stands now. A registration whose link was
// used (or replaced and used) has nothing to send: the job is cancelled, not retried.
// It is sent without the claim in sent_mail that the order emails take: a second
// copy of a link email, after a crash between sending and completing, harms nobody.
// No error names the address, since River logs and keeps the errors.
func (w *verificationWorker) Work(ctx context.Context, job *river.Job[VerificationEmail]) error {
	if w.verifications == nil {
		return river.JobCancel(errors.New("no verification service to read the registration"))
	}
	a := job.Args
	msg, err := w.verifications.LinkMail(ctx, a.EventID, a.EmailID, w.site)
	if errors.Is(err, verification.ErrLinkOver) {
		return river.JobCancel(err)
	} else if err != nil {
		return err
	}
	return w.sendUnclaimed(ctx, msg)
}

// sendUnclaimed sends an email that needs no claim in sent_mail (a second copy harms
// nobody) and whose errors must not name its address, since River logs and keeps
// them. A server that refuses the address for good cancels the job.
func (d deps) sendUnclaimed(ctx context.Context, msg mail.Message) error {
	if err := d.mailer.Send(ctx, msg); err != nil {
		err = unnamed{err: err, addr: msg.To}
		if errors.Is(err, mail.ErrPermanent) {
			return river.JobCancel(err)
		}
		return err
	}
	return nil
}

// unnamed is a sending error with the recipient's address taken out of its text.
type unnamed struct {
	err  error
	addr string
}

func (u unnamed) Error() string {
	if u.addr == "" {
		return u.err.Error()
	}
	return strings.ReplaceAll(u.err.Error(), u.addr, "<address>")
}

func (u unnamed) Unwrap() error { return u.err }
