package jobs_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"boxoffice/internal/booking"
	"boxoffice/internal/config"
	"boxoffice/internal/dbtest"
	"boxoffice/internal/jobs"
	"boxoffice/internal/mail"
	"boxoffice/internal/mail/mailtest"
)

// These tests run River on a real database (a fresh one per test) and send through the
// real mail catcher. The booking service behind the workers is a stand-in that answers
// from orders built by hand and counts the calls, so that the queue's rules (which
// job runs, how often, what is sent) are tested apart from the money rules, which
// booking's own tests cover through the real service.

// TestOnlyCommittedJobsRun: a job queued in a transaction that rolls back never exists
// and so never runs; one queued in a transaction that commits runs and its email
// arrives.
func TestOnlyCommittedJobsRun(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	rolledBack, committed := h.order(1, booking.StatusConfirmed), h.order(2, booking.StatusConfirmed)

	h.inTx(t, false, func(tx pgx.Tx) error { return h.q.OrderConfirmed(t.Context(), tx, rolledBack.Order.ID) })
	h.inTx(t, true, func(tx pgx.Tx) error { return h.q.OrderConfirmed(t.Context(), tx, committed.Order.ID) })
	h.run(t, h.q)
	h.waitIdle(t)

	h.catcher.Wait(t, committed.Order.Email, 1)
	if got := h.mails(t, rolledBack.Order.Email); got != 0 {
		t.Errorf("rolled-back order: got %d emails, want 0", got)
	}
	if got := h.jobs(t, jobs.OrderConfirmedEmail{}.Kind()); len(got) != 1 || got[0].State != rivertype.JobStateCompleted {
		t.Errorf("got jobs %v, want one, completed", states(got))
	}
}

// TestConfirmationEmailOnce: the confirmation asked for again and again (a replayed
// webhook, a retried transaction, a second instance), before and after it was sent,
// is one job and one email.
func TestConfirmationEmailOnce(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	r := h.order(7, booking.StatusConfirmed)
	ask := func() {
		h.inTx(t, true, func(tx pgx.Tx) error { return h.q.OrderConfirmed(t.Context(), tx, r.Order.ID) })
	}
	ask()
	ask()
	h.run(t, h.q)
	h.catcher.Wait(t, r.Order.Email, 1)
	h.waitIdle(t)
	ask()
	h.waitIdle(t)

	if got := h.mails(t, r.Order.Email); got != 1 {
		t.Errorf("got %d emails, want exactly 1", got)
	}
	if got := h.jobs(t, jobs.OrderConfirmedEmail{}.Kind()); len(got) != 1 {
		t.Errorf("got %d jobs, want 1", len(got))
	}

	// Negative control: the catcher keeps a second copy of the same email (same
	// Message-ID), so a second send above would have been counted.
	control := h.order(8, booking.StatusConfirmed)
	msg, err := mail.Confirmation(control, mail.Site{BaseURL: "http://localhost:8080"})
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := h.mailer.Send(t.Context(), msg); err != nil {
			t.Fatal(err)
		}
	}
	if got := len(h.catcher.Wait(t, control.Order.Email, 2)); got != 2 {
		t.Errorf("control: got %d copies, want 2", got)
	}
	if n := h.fake.receipts(r.Order.ID); n != 1 {
		t.Errorf("the worker read the order %d times, want once", n)
	}
}

// TestEmailNotSentAgainAfterSend closes the window between the mail server accepting
// an email and River recording its job completed: a job run again after a successful
// send (River retrying it, as it would after a crash in that window) finds the email
// recorded as sent in sent_mail and sends nothing more. A job run again after a claim
// with no record of the sending (a crash between the server's acceptance and the
// record) sends once more, with the same Message-ID, so that the copy can be dropped.
//
// Negative control: with the record of the first email deleted, the same retry sends
// a second copy: the count of emails above does catch a second send.
func TestEmailNotSentAgainAfterSend(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ctx := t.Context()
	sent := h.order(31, booking.StatusConfirmed)
	h.inTx(t, true, func(tx pgx.Tx) error { return h.q.OrderConfirmed(ctx, tx, sent.Order.ID) })
	h.run(t, h.q)
	h.waitIdle(t)
	first := h.catcher.Wait(t, sent.Order.Email, 1)
	var claims int
	var messageID string
	if err := h.pool.QueryRow(ctx, `SELECT message_id, attempts FROM sent_mail WHERE order_id = $1 AND sent_at IS NOT NULL`,
		sent.Order.ID).Scan(&messageID, &claims); err != nil || claims != 1 || messageID != first[0].MessageID {
		t.Fatalf("sent_mail: got %q, %d claims (%v), want the email's Message-ID %q, sent at the first claim", messageID, claims, err, first[0].MessageID)
	}

	job := h.jobs(t, jobs.OrderConfirmedEmail{}.Kind())[0]
	retry := func() {
		t.Helper()
		if _, err := h.q.Client().JobRetry(ctx, job.ID); err != nil {
			t.Fatal(err)
		}
		h.waitIdle(t)
	}
	retry()
	if got := h.jobs(t, jobs.OrderConfirmedEmail{}.Kind()); len(got) != 1 || got[0].State != rivertype.JobStateCompleted || got[0].Attempt != 2 {
		t.Errorf("got jobs %v, want the one job completed again, at its second attempt", states(got))
	}
	if n := h.fake.receipts(sent.Order.ID); n != 2 {
		t.Errorf("the worker ran %d times, want 2 (the retry ran)", n)
	}
	if got := h.mails(t, sent.Order.Email); got != 1 {
		t.Errorf("after a retry of a sent email: got %d emails, want still 1", got)
	}

	// A claim left by a sending whose record was lost: sent again, the same message.
	cut := h.order(32, booking.StatusConfirmed)
	msg, err := mail.Confirmation(cut, mail.Site{BaseURL: "http://localhost:8080", MaxPerBuyer: 10})
	if err != nil {
		t.Fatal(err)
	}
	if err := h.mailer.Send(ctx, msg); err != nil { // what the cut-short run got out
		t.Fatal(err)
	}
	if _, err := h.pool.Exec(ctx, `INSERT INTO sent_mail (message_id, order_id, kind) VALUES ($1, $2, $3)`,
		msg.ID, cut.Order.ID, jobs.OrderConfirmedEmail{}.Kind()); err != nil {
		t.Fatal(err)
	}
	h.inTx(t, true, func(tx pgx.Tx) error { return h.q.OrderConfirmed(ctx, tx, cut.Order.ID) })
	h.waitIdle(t)
	copies := h.catcher.Wait(t, cut.Order.Email, 2)
	if len(copies) != 2 || copies[0].MessageID != msg.ID || copies[1].MessageID != msg.ID {
		t.Errorf("after a claim without a record: got %d emails %v, want 2 with Message-ID %q", len(copies), copies, msg.ID)
	}
	if err := h.pool.QueryRow(ctx, `SELECT attempts FROM sent_mail WHERE message_id = $1 AND sent_at IS NOT NULL`, msg.ID).Scan(&claims); err != nil || claims != 2 {
		t.Errorf("sent_mail: got %d claims (%v), want 2 and sent", claims, err)
	}

	// The negative control.
	if _, err := h.pool.Exec(ctx, `DELETE FROM sent_mail WHERE order_id = $1`, sent.Order.ID); err != nil {
		t.Fatal(err)
	}
	retry()
	if got := len(h.catcher.Wait(t, sent.Order.Email, 2)); got != 2 {
		t.Errorf("control: got %d emails, want 2 (without its record, a retry sends again)", got)
	}
}

// TestSeveralInstances: two instances work one database; every order asked for twice
// at once, from transactions that commit together, gets exactly one email.
func TestSeveralInstances(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	second := h.queue(t, poolOf(t, h.url))
	const orders = 8
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range orders {
		r := h.order(int64(100+i), booking.StatusConfirmed)
		for _, q := range []*jobs.Queue{h.q, second} {
			wg.Go(func() {
				<-start
				h.inTx(t, true, func(tx pgx.Tx) error { return q.OrderConfirmed(context.Background(), tx, r.Order.ID) })
			})
		}
	}
	close(start)
	wg.Wait()
	h.run(t, h.q)
	h.run(t, second)
	h.waitIdle(t)

	for i := range orders {
		if got := h.mails(t, h.fake.get(int64(100+i)).Order.Email); got != 1 {
			t.Errorf("order %d: got %d emails, want 1", 100+i, got)
		}
	}
	if got := h.jobs(t, jobs.OrderConfirmedEmail{}.Kind()); len(got) != orders {
		t.Errorf("got %d jobs, want %d", len(got), orders)
	}
}

// TestConfirmationNotForRefundedOrder: a confirmation whose order is no longer
// confirmed sends nothing, and its job says why.
func TestConfirmationNotForRefundedOrder(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	r := h.order(3, booking.StatusRefunded)
	h.inTx(t, true, func(tx pgx.Tx) error { return h.q.OrderConfirmed(t.Context(), tx, r.Order.ID) })
	h.inTx(t, true, func(tx pgx.Tx) error { return h.q.OrderConfirmed(t.Context(), tx, 999) }) // no such order
	h.run(t, h.q)
	h.waitIdle(t)

	if got := h.mails(t, r.Order.Email); got != 0 {
		t.Errorf("got %d emails, want none for a refunded order", got)
	}
	got := h.jobs(t, jobs.OrderConfirmedEmail{}.Kind())
	if len(got) != 2 {
		t.Fatalf("got %d jobs, want 2", len(got))
	}
	for _, j := range got {
		if j.State != rivertype.JobStateCancelled || len(j.Errors) == 0 || j.Attempt != 1 {
			t.Errorf("job %s: got %s after %d attempts, want cancelled at once with its reason", j.EncodedArgs, j.State, j.Attempt)
		}
	}
}

// TestRefund: a refund is retried with backoff until the provider takes it, and the
// refund email says why in plain words, once.
func TestRefund(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	r := h.order(5, booking.StatusRefunded)
	r.Order.StatusReason = "seats_unavailable"
	h.fake.put(r)
	h.fake.failRefunds(1)
	h.inTx(t, true, func(tx pgx.Tx) error {
		return errors.Join(h.q.RefundDue(t.Context(), tx, 55, 1), h.q.RefundDue(t.Context(), tx, 55, 1),
			h.q.OrderRefunded(t.Context(), tx, r.Order.ID), h.q.OrderRefunded(t.Context(), tx, r.Order.ID))
	})
	h.run(t, h.q)
	h.waitIdle(t)

	if n := h.fake.refunds(55); n != 2 {
		t.Errorf("RunRefund called %d times, want 2 (one failure, one retry)", n)
	}
	refund := h.jobs(t, jobs.RefundDue{}.Kind())
	if len(refund) != 1 || refund[0].State != rivertype.JobStateCompleted || refund[0].Attempt != 2 || len(refund[0].Errors) != 1 {
		t.Errorf("got refund jobs %v, want one completed at its second attempt with the first error kept", states(refund))
	}
	got := h.catcher.Wait(t, r.Order.Email, 1)
	msg, err := h.catcher.Message(t.Context(), got[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(msg.Text, "sold to someone else") || !strings.Contains(msg.Subject, "Refund for order 5") {
		t.Errorf("got %q:\n%s\nwant the refund and its reason", msg.Subject, msg.Text)
	}
	if n := h.mails(t, r.Order.Email); n != 1 {
		t.Errorf("got %d refund emails, want 1", n)
	}
}

// TestReconcileScheduled: reconciliation is a periodic job, queued by the elected
// instance when it starts and every interval after, and worked like any job.
func TestReconcileScheduled(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.run(t, h.q)
	select {
	case <-h.fake.reconciled:
	case <-time.After(30 * time.Second):
		t.Fatal("reconciliation did not run within 30s of the start")
	}
	got := h.jobs(t, jobs.Reconcile{}.Kind())
	if len(got) == 0 || got[0].Metadata == nil || !strings.Contains(string(got[0].Metadata), "reconcile") {
		t.Errorf("got reconcile jobs %v, want one queued by the periodic job named reconcile", states(got))
	}
}

// harness is one database, one queue on it, the stand-in booking and the mail catcher.
type harness struct {
	url     string
	to      string // this test's own address; each order's is a variant of it
	pool    *pgxpool.Pool
	fake    *fakeBooking
	mailer  *mail.Mailer
	catcher *mailtest.Catcher
	q       *jobs.Queue
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	h := &harness{url: dbtest.URL(t), fake: newFakeBooking(), catcher: mailtest.New(t)}
	h.pool = poolOf(t, h.url)
	h.to = mailtest.Address(t)
	s, err := config.ParseSMTPURL(h.catcher.SMTPURL)
	if err != nil {
		t.Fatal(err)
	}
	h.mailer, err = mail.New(mail.Config{Host: s.Host, Port: s.Port, From: "tickets@boxoffice.test"}, testLog(t))
	if err != nil {
		t.Fatal(err)
	}
	h.q = h.queue(t, h.pool)
	return h
}

// queue builds a queue on pool with the tests' settings, changed by each of with.
func (h *harness) queue(t *testing.T, pool *pgxpool.Pool, with ...func(*jobs.Config)) *jobs.Queue {
	t.Helper()
	cfg := jobs.Config{
		Workers: 4, ReconcileInterval: time.Minute, StopTimeout: 5 * time.Second, TestOnly: true,
		Site: mail.Site{BaseURL: "http://localhost:8080", MaxPerBuyer: 10},
	}
	for _, f := range with {
		f(&cfg)
	}
	q, err := jobs.New(pool, h.fake, h.mailer, cfg, testLog(t))
	if err != nil {
		t.Fatal(err)
	}
	return q
}

// order makes a receipt for the stand-in booking to answer with, sent to an address
// of this test's own.
func (h *harness) order(id int64, status string) booking.Receipt {
	r := booking.Receipt{
		Order: booking.Order{
			ID: id, EventID: 1, Email: strings.Replace(h.to, "@", fmt.Sprintf("+%d@", id), 1), Status: status, AmountCents: 4500,
			Seats:   []booking.Seat{{ID: 10, Section: "Stalls", Row: "A", Number: 1, PriceCents: 4500}},
			Tickets: []booking.Ticket{{ID: id * 10, SeatID: 10, Code: fmt.Sprintf("T-%d", id)}},
		},
		Event: booking.Event{ID: 1, Name: "Test night", Venue: "Hall", StartsAt: time.Now().Add(48 * time.Hour)},
	}
	h.fake.put(r)
	return r
}

// inTx runs fn in a transaction on the harness's pool, then commits or rolls back.
func (h *harness) inTx(t *testing.T, commit bool, fn func(pgx.Tx) error) {
	t.Helper()
	ctx := context.Background()
	tx, err := h.pool.Begin(ctx)
	if err != nil {
		t.Error(err)
		return
	}
	if err := fn(tx); err != nil {
		t.Error(err)
	}
	if commit {
		err = tx.Commit(ctx)
	} else {
		err = tx.Rollback(ctx)
	}
	if err != nil {
		t.Error(err)
	}
}

// run works q until the test ends.
func (h *harness) run(t *testing.T, q *jobs.Queue) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		q.Run(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
}

func (h *harness) waitIdle(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	if err := h.q.WaitIdle(ctx); err != nil {
		t.Fatal(err)
	}
}

func (h *harness) mails(t *testing.T, to string) int {
	t.Helper()
	got, err := h.catcher.To(t.Context(), to)
	if err != nil {
		t.Fatal(err)
	}
	return len(got)
}

func (h *harness) jobs(t *testing.T, kind string) []*rivertype.JobRow {
	t.Helper()
	res, err := h.q.Client().JobList(t.Context(), river.NewJobListParams().Kinds(kind).First(1000))
	if err != nil {
		t.Fatal(err)
	}
	return res.Jobs
}

func states(js []*rivertype.JobRow) []string {
	var out []string
	for _, j := range js {
		out = append(out, fmt.Sprintf("%d:%s/attempt %d/%d errors", j.ID, j.State, j.Attempt, len(j.Errors)))
	}
	return out
}

// poolOf opens a pool on the database at url until the test ends: a second instance's.
func poolOf(t *testing.T, url string) *pgxpool.Pool {
	t.Helper()
	pool, err := pgxpool.New(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return pool
}

func testLog(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn}))
}

// TestRefundNotBehindEmails: emails and money have queues of their own. With every
// email worker held (more confirmations queued than there are workers, each stuck
// reading its receipt), a refund still runs; the emails all go out once they can.
// In one queue, an onsale's confirmations held refunds and reconciliation back for
// minutes.
func TestRefundNotBehindEmails(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.fake.gate = make(chan struct{})
	const emails = 8 // twice the workers
	var ids []int64
	for i := range int64(emails) {
		ids = append(ids, h.order(100+i, booking.StatusConfirmed).Order.ID)
	}
	h.inTx(t, true, func(tx pgx.Tx) error {
		var err error
		for _, id := range ids {
			err = errors.Join(err, h.q.OrderConfirmed(t.Context(), tx, id))
		}
		return err
	})
	h.run(t, h.q)
	// The emails take their workers first, then the refund is queued.
	for deadline := time.Now().Add(30 * time.Second); len(h.running(t, jobs.OrderConfirmedEmail{}.Kind())) < 4; {
		if time.Now().After(deadline) {
			t.Fatal("the confirmations did not take the email workers within 30 s")
		}
		time.Sleep(20 * time.Millisecond)
	}
	h.inTx(t, true, func(tx pgx.Tx) error { return h.q.RefundDue(t.Context(), tx, 77, 1) })
	for deadline := time.Now().Add(30 * time.Second); h.fake.refunds(77) == 0; {
		if time.Now().After(deadline) {
			t.Fatalf("the refund did not run within 30 s while the emails held their workers (running: %v)",
				states(h.running(t, "")))
		}
		time.Sleep(20 * time.Millisecond)
	}
	close(h.fake.gate)
	h.waitIdle(t)
	for _, id := range ids {
		if n := h.fake.receipts(id); n != 1 {
			t.Errorf("order %d: %d receipts read, want 1 (its email sent once)", id, n)
		}
	}
	if got := h.jobs(t, jobs.OrderConfirmedEmail{}.Kind()); len(got) != emails {
		t.Errorf("got %d confirmation jobs, want %d", len(got), emails)
	} else {
		for _, j := range got {
			if j.State != rivertype.JobStateCompleted || j.Queue != jobs.QueueEmail {
				t.Errorf("confirmation job %d: %s in queue %q, want completed in %q", j.ID, j.State, j.Queue, jobs.QueueEmail)
			}
		}
	}
}

// running is the jobs of kind (every kind: "") being worked now.
func (h *harness) running(t *testing.T, kind string) []*rivertype.JobRow {
	t.Helper()
	p := river.NewJobListParams().States(rivertype.JobStateRunning).First(1000)
	if kind != "" {
		p = p.Kinds(kind)
	}
	res, err := h.q.Client().JobList(t.Context(), p)
	if err != nil {
		t.Fatal(err)
	}
	return res.Jobs
}

// TestEmailWorkers: the emails are sent by EmailWorkers at once, not by the money's
// Workers: with 6 email workers and 4 for the money, 6 confirmations run together.
func TestEmailWorkers(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.fake.gate = make(chan struct{})
	h.q = h.queue(t, h.pool, func(c *jobs.Config) { c.EmailWorkers = 6 })
	var ids []int64
	for i := range int64(9) {
		ids = append(ids, h.order(200+i, booking.StatusConfirmed).Order.ID)
	}
	h.inTx(t, true, func(tx pgx.Tx) error {
		var err error
		for _, id := range ids {
			err = errors.Join(err, h.q.OrderConfirmed(t.Context(), tx, id))
		}
		return err
	})
	h.run(t, h.q)
	deadline := time.Now().Add(30 * time.Second)
	for len(h.running(t, jobs.OrderConfirmedEmail{}.Kind())) < 6 {
		if time.Now().After(deadline) {
			t.Fatalf("%d confirmations running after 30 s, want 6 (EmailWorkers)", len(h.running(t, jobs.OrderConfirmedEmail{}.Kind())))
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond) // three of River's fetches: no seventh may start
	if n := len(h.running(t, jobs.OrderConfirmedEmail{}.Kind())); n != 6 {
		t.Errorf("%d confirmations running, want 6 (EmailWorkers)", n)
	}
	close(h.fake.gate)
	h.waitIdle(t)
}

// TestConfirmationWaitsForTheSale: while the sale presses the application
// (Config.Busy), a confirmation waits: its order is not read and no email goes. Once
// the sale eases, it goes. A sale that never eases holds it back EmailWait after it
// was queued, and no longer.
func TestConfirmationWaitsForTheSale(t *testing.T) {
	t.Parallel()
	t.Run("until the sale eases", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		var busy atomic.Bool
		busy.Store(true)
		asked := make(chan struct{}, 1)
		h.q = h.queue(t, h.pool, func(c *jobs.Config) {
			c.EmailWait = time.Hour
			c.Busy = func() bool {
				select {
				case asked <- struct{}{}:
				default:
				}
				return busy.Load()
			}
		})
		r := h.order(1, booking.StatusConfirmed)
		h.inTx(t, true, func(tx pgx.Tx) error { return h.q.OrderConfirmed(t.Context(), tx, r.Order.ID) })
		h.run(t, h.q)
		// Three answers "busy" taken: the worker has asked again after waiting.
		for range 3 {
			select {
			case <-asked:
			case <-time.After(30 * time.Second):
				t.Fatal("the confirmation did not ask whether the sale is busy within 30 s")
			}
		}
		if n := h.fake.receipts(r.Order.ID); n != 0 {
			t.Errorf("the order was read %d times while the sale was busy, want 0", n)
		}
		if got := h.mails(t, r.Order.Email); got != 0 {
			t.Errorf("%d emails sent while the sale was busy, want 0", got)
		}
		busy.Store(false)
		h.catcher.Wait(t, r.Order.Email, 1)
		h.waitIdle(t)
		if n := h.fake.receipts(r.Order.ID); n != 1 {
			t.Errorf("the order was read %d times, want once", n)
		}
	})
	t.Run("not in a dip of the sale", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		// The sale answers "busy" and "not busy" by turns, as the load meter's level
		// does around its mark in a sale, until it eases for good.
		var calls, eased atomic.Int64
		h.q = h.queue(t, h.pool, func(c *jobs.Config) {
			c.EmailWait = time.Hour
			c.Busy = func() bool {
				n := calls.Add(1)
				if eased.Load() != 0 {
					return false
				}
				return n%2 == 1
			}
		})
		r := h.order(3, booking.StatusConfirmed)
		h.inTx(t, true, func(tx pgx.Tx) error { return h.q.OrderConfirmed(t.Context(), tx, r.Order.ID) })
		h.run(t, h.q)
		deadline := time.Now().Add(30 * time.Second)
		for calls.Load() < 12 && h.mails(t, r.Order.Email) == 0 { // six dips answered "not busy"
			if time.Now().After(deadline) {
				t.Fatalf("the confirmation asked %d times in 30 s whether the sale is busy, want 12", calls.Load())
			}
			time.Sleep(50 * time.Millisecond)
		}
		if got := h.mails(t, r.Order.Email); got != 0 {
			t.Errorf("%d emails sent in a dip of the sale, want 0", got)
		}
		eased.Store(time.Now().UnixNano())
		h.catcher.Wait(t, r.Order.Email, 1)
		if n := h.fake.receipts(r.Order.ID); n != 1 {
			t.Errorf("the order was read %d times, want once", n)
		}
	})
	t.Run("EmailWait at most", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		const wait = time.Second
		var asked atomic.Int64
		h.q = h.queue(t, h.pool, func(c *jobs.Config) {
			c.EmailWait = wait
			c.Busy = func() bool { asked.Add(1); return true }
		})
		r := h.order(2, booking.StatusConfirmed)
		queued := time.Now()
		h.inTx(t, true, func(tx pgx.Tx) error { return h.q.OrderConfirmed(t.Context(), tx, r.Order.ID) })
		h.run(t, h.q)
		h.catcher.Wait(t, r.Order.Email, 1)
		if took := time.Since(queued); took < wait || asked.Load() < 2 {
			t.Errorf("sent %s after it was queued, having asked %d times whether the sale is busy; want %s or more, and asked twice or more",
				took.Round(time.Millisecond), asked.Load(), wait)
		}
	})
}

// TestStartsOnceTheDatabaseIsBack: a queue whose database is away when it starts
// starts once it is back, and works what was queued meanwhile. Before, River's failed
// start ended Run, and the instance sent no email and made no refund until restarted.
func TestStartsOnceTheDatabaseIsBack(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	cfg, err := pgx.ParseConfig(h.url)
	if err != nil {
		t.Fatal(err)
	}
	proxy := dbtest.NewProxy(t, fmt.Sprintf("%s:%d", cfg.Host, cfg.Port))
	proxy.Down()
	q := h.queue(t, poolOf(t, dbtest.ProxiedURL(t, h.url, proxy)))
	h.run(t, q)
	time.Sleep(300 * time.Millisecond) // a few starts fail meanwhile

	o := h.order(1, booking.StatusConfirmed)
	h.inTx(t, true, func(tx pgx.Tx) error { return h.q.OrderConfirmed(t.Context(), tx, o.Order.ID) })
	proxy.Up()
	h.catcher.Wait(t, o.Order.Email, 1)
}

// TestConfirmationsPacedInASale: while a sale is on, the confirmations start one at a
// time at the sale's pace (here 10 a second, on a clock the test moves), however many
// workers River gave them: with the clock standing still one goes and the others wait
// without reading their orders; a tenth of a second later, one more; when the sale is
// over, the rest at once.
func TestConfirmationsPacedInASale(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	var onSale atomic.Bool
	onSale.Store(true)
	var clock atomic.Int64
	clock.Store(time.Unix(1_800_000_000, 0).UnixNano())
	h.q = h.queue(t, h.pool, func(c *jobs.Config) {
		c.EmailWorkers = 4
		c.OnSale = onSale.Load
		c.SaleRate = 10
		c.PaceClock = func() time.Time { return time.Unix(0, clock.Load()) }
	})
	var orders []booking.Receipt
	for id := range int64(4) {
		orders = append(orders, h.order(id+1, booking.StatusConfirmed))
	}
	h.inTx(t, true, func(tx pgx.Tx) error {
		for _, r := range orders {
			if err := h.q.OrderConfirmed(t.Context(), tx, r.Order.ID); err != nil {
				return err
			}
		}
		return nil
	})
	sent := func() (mails, receipts int) {
		for _, r := range orders {
			mails += h.mails(t, r.Order.Email)
			receipts += h.fake.receipts(r.Order.ID)
		}
		return mails, receipts
	}
	// sends waits for n emails, then gives the waiting ones time to ask for their turn
	// a dozen times, and checks that no more went.
	sends := func(n int, what string) {
		t.Helper()
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			if m, _ := sent(); m >= n {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: %d emails within 30 s, want %d", what, n, n)
			}
		}
		time.Sleep(250 * time.Millisecond)
		if m, r := sent(); m != n || r != n {
			t.Fatalf("%s: %d emails sent, %d orders read; want %d of each", what, m, r, n)
		}
	}
	h.run(t, h.q)
	for deadline := time.Now().Add(30 * time.Second); len(h.running(t, jobs.OrderConfirmedEmail{}.Kind())) < 3; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the confirmations did not take three workers within 30 s")
		}
	}
	sends(1, "the sale's clock standing still")
	clock.Add(int64(100 * time.Millisecond))
	sends(2, "a tenth of a second later on the sale's clock")
	onSale.Store(false)
	for _, r := range orders {
		h.catcher.Wait(t, r.Order.Email, 1)
	}
	h.waitIdle(t)
	if m, r := sent(); m != 4 || r != 4 {
		t.Errorf("the sale over: %d emails, %d orders read; want 4 of each", m, r)
	}
}
