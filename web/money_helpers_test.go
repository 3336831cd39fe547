package web_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"boxoffice/internal/apptest"
	"boxoffice/internal/booking"
	"boxoffice/internal/booking/bookingtest"
	"boxoffice/internal/jobs"
	"boxoffice/internal/mail/mailtest"
	"boxoffice/web"
)

// moneyApp is the program as it runs in production, job queue included: refunds and
// emails are River jobs, queued in the transactions that cause them and worked by the
// program's own workers (apptest's RunJobs), and the emails reach the test mail
// catcher. The buyers of a test check out with an address of the test's own (to), so
// that settle can count their emails in the shared catcher.
type moneyApp struct {
	*testApp
	prog *apptest.Program
	mail *mailtest.Catcher
	to   string
}

// newMoneyApp starts the program and works its job queue until the test ends.
func newMoneyApp(t *testing.T, opts ...func(*appOptions)) *moneyApp {
	t.Helper()
	app := newTestApp(t, append([]func(*appOptions){func(o *appOptions) { o.Mail = true }}, opts...)...)
	if _, err := app.Pool.Exec(context.Background(), txLogSQL); err != nil {
		t.Fatal(err)
	}
	prog := app.App
	prog.RunJobs(t) // stops before the program closes: cleanups run last-in first-out
	return &moneyApp{testApp: app, prog: prog, mail: mailtest.New(t), to: mailtest.Address(t)}
}

// checkout checks a hold out for c with the test's own address, as client.checkout
// does with a shared one.
func (a *moneyApp) checkout(c *client, holdID string) web.CheckoutAnswerJSON {
	c.t.Helper()
	var co web.CheckoutAnswerJSON
	if st := c.do("POST", "/api/v1/holds/"+holdID+"/checkout", map[string]string{"email": a.to}, &co); st != http.StatusCreated {
		c.t.Fatalf("checkout %s: got status %d, want 201", holdID, st)
	}
	return co
}

// settle waits for the refunds to be done and every job queued so far to be worked,
// then checks every invariant of the demo event, of seats and of money; that every
// job of the test completed (none failed for good, none was cancelled); and that the
// emails add up (checkMail).
func (a *moneyApp) settle(t *testing.T) {
	t.Helper()
	bookingtest.SettleMoney(t, a.Pool, a.EventID, 15*time.Second)
	a.prog.WaitJobs(t)
	rows, err := a.Pool.Query(context.Background(), `
		SELECT id, kind, state::text, attempt, errors::text FROM river_job
		WHERE kind <> $1 AND state <> 'completed' ORDER BY id`, jobs.Reconcile{}.Kind())
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id int64
		var kind, state string
		var attempt int
		var errs *string
		if err := rows.Scan(&id, &kind, &state, &attempt, &errs); err != nil {
			t.Fatal(err)
		}
		t.Errorf("job %d (%s): got %s after %d attempts (errors %v), want completed", id, kind, state, attempt, deref(errs))
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	a.checkJobsInTx(t)
	a.checkMail(t)
}

// txLogSQL records, by triggers, which transaction wrote each River job, each ticket
// and each refund, and which settled each refund (test setup: the program's own
// schema knows nothing of it). checkJobsInTx compares them.
const txLogSQL = `
CREATE TABLE test_tx_log (what text NOT NULL, id bigint NOT NULL, txid bigint NOT NULL DEFAULT txid_current());
CREATE FUNCTION test_tx_log() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	IF TG_TABLE_NAME = 'tickets' THEN
		INSERT INTO test_tx_log (what, id) VALUES ('ticket of order', NEW.order_id);
	ELSIF TG_TABLE_NAME = 'refunds' AND TG_OP = 'INSERT' THEN
		INSERT INTO test_tx_log (what, id) VALUES ('refund created', NEW.id);
	ELSIF TG_TABLE_NAME = 'refunds' THEN
		IF NEW.state = 'succeeded' AND OLD.state <> 'succeeded' THEN
			INSERT INTO test_tx_log (what, id) VALUES ('refund settled', NEW.id);
		END IF;
	ELSE
		INSERT INTO test_tx_log (what, id) VALUES ('job', NEW.id);
	END IF;
	RETURN NULL;
END $$;
CREATE TRIGGER test_tx_log AFTER INSERT ON river_job FOR EACH ROW EXECUTE FUNCTION test_tx_log();
CREATE TRIGGER test_tx_log AFTER INSERT ON tickets FOR EACH ROW EXECUTE FUNCTION test_tx_log();
CREATE TRIGGER test_tx_log AFTER INSERT OR UPDATE ON refunds FOR EACH ROW EXECUTE FUNCTION test_tx_log();
`

// checkJobsInTx checks that each side effect was queued in the transaction of the
// change that caused it (txLogSQL's record): a confirmation with the tickets it
// sends, a refund with its record, a refund email with the settling of its refund.
func (a *moneyApp) checkJobsInTx(t *testing.T) {
	t.Helper()
	rows, err := a.Pool.Query(context.Background(), `
		SELECT j.id, j.kind, j.args::text
		FROM river_job j JOIN test_tx_log l ON l.what = 'job' AND l.id = j.id
		WHERE j.kind <> $1 AND NOT EXISTS (
			SELECT 1 FROM test_tx_log c
			WHERE c.txid = l.txid AND CASE j.kind
			  WHEN $2 THEN c.what = 'ticket of order' AND c.id = (j.args->>'order_id')::bigint
			  WHEN $3 THEN c.what = 'refund created' AND c.id = (j.args->>'refund_id')::bigint
			  WHEN $4 THEN c.what = 'refund settled' AND c.id = (j.args->>'refund_id')::bigint
			  WHEN $5 THEN c.what = 'refund settled' AND c.id IN (SELECT r.id FROM refunds r WHERE r.order_id = (j.args->>'order_id')::bigint)
			  ELSE false END)`,
		jobs.Reconcile{}.Kind(), jobs.OrderConfirmedEmail{}.Kind(), jobs.RefundDue{}.Kind(),
		jobs.PaymentRefundedEmail{}.Kind(), jobs.OrderRefundedEmail{}.Kind())
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var kind, args string
		if err := rows.Scan(&id, &kind, &args); err != nil {
			t.Fatal(err)
		}
		t.Errorf("job %d (%s %s): not queued in the transaction of the change that caused it", id, kind, args)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	var logged, all int
	if err := a.Pool.QueryRow(context.Background(), `SELECT (SELECT count(*) FROM test_tx_log WHERE what = 'job'),
		(SELECT count(*) FROM river_job)`).Scan(&logged, &all); err != nil || logged != all {
		t.Errorf("transaction log: %d of %d jobs logged (%v), want all", logged, all, err)
	}
}

// checkMail checks the emails of the orders sent to the test's own address against
// what the orders are now: a confirmed order got exactly one confirmation, a refunded
// one none and exactly one refund email; every refund of a payment that did not end
// its order (a second payment of a confirmed order, say) got exactly one email of its
// own; nothing else, and no email twice (replayed webhooks, retried jobs). Orders
// checked out with another address are not counted: they share the catcher with
// other tests.
func (a *moneyApp) checkMail(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	want := map[string]int{} // Message-ID prefix (before the @) → emails
	rows, err := a.Pool.Query(ctx, `
		SELECT o.id, o.status::text,
		       (SELECT count(*) FROM refunds r WHERE r.order_id = o.id AND r.state = 'succeeded')
		FROM orders o WHERE o.event_id = $1 AND o.email = $2`, a.EventID, a.to)
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for rows.Next() {
		var id, refunds int64
		var status string
		if err := rows.Scan(&id, &status, &refunds); err != nil {
			t.Fatal(err)
		}
		order := "order-" + itoa(id)
		switch status {
		case booking.StatusConfirmed:
			want[order+".confirmation"] = 1
		case booking.StatusRefunded:
			want[order+".refund"] = 1
		}
		total += want[order+".confirmation"] + want[order+".refund"]
		if status == booking.StatusConfirmed || status == booking.StatusPending {
			// Every refund of an order that stands is told on its own.
			total += int(refunds)
			want[order+".refund-*"] = int(refunds)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	var list []mailtest.Summary
	if total > 0 {
		list = a.mail.Wait(t, a.to, total)
	} else if list, err = a.mail.To(ctx, a.to); err != nil {
		t.Fatal(err)
	}
	got, copies := map[string]int{}, map[string]int{}
	for _, m := range list {
		if copies[m.MessageID]++; copies[m.MessageID] == 2 {
			t.Errorf("email %s (%q): got it twice, want once", m.MessageID, m.Subject)
		}
		id, _, _ := strings.Cut(m.MessageID, "@")
		if order, _, ok := strings.Cut(id, ".refund-"); ok {
			id = order + ".refund-*" // one per refund: counted by order
		}
		got[id]++
		if _, ok := want[id]; !ok {
			want[id] = 0
		}
	}
	for id, n := range want {
		if got[id] != n {
			t.Errorf("emails %s: got %d, want %d", id, got[id], n)
		}
	}
}

// mailWith returns the one email to the test's address whose subject starts with
// subject, waiting for it; none or several fail the test.
func (a *moneyApp) mailWith(t *testing.T, subject string) mailtest.Message {
	t.Helper()
	ctx := context.Background()
	deadline := time.Now().Add(15 * time.Second)
	for {
		list, err := a.mail.To(ctx, a.to)
		if err != nil {
			t.Fatal(err)
		}
		var found []mailtest.Summary
		for _, m := range list {
			if strings.HasPrefix(m.Subject, subject) {
				found = append(found, m)
			}
		}
		switch {
		case len(found) > 1:
			t.Fatalf("emails %q: got %d, want 1", subject, len(found))
		case len(found) == 1:
			msg, err := a.mail.Message(ctx, found[0].ID)
			if err != nil {
				t.Fatal(err)
			}
			return msg
		case time.Now().After(deadline):
			t.Fatalf("no email %q to %s after 15s", subject, a.to)
		}
		time.Sleep(50 * time.Millisecond) // polling mailpit's API, as mailtest.Wait does
	}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// jobCount counts the order's River jobs of a kind, in any state: an email job names
// its order, a refund job its refund, which names the order.
func (a *moneyApp) jobCount(t *testing.T, kind string, orderID int64) int {
	t.Helper()
	return count(t, a.Pool, `
		SELECT count(*) FROM river_job j
		WHERE j.kind = $1 AND coalesce((j.args->>'order_id')::bigint,
		      (SELECT r.order_id FROM refunds r WHERE r.id = (j.args->>'refund_id')::bigint)) = $2`, kind, orderID)
}

// reconcile runs one reconciliation pass, as the periodic job does, after making the
// order's payments and refunds look old enough to be looked up (test setup: the
// program's own ReconcileAfter is minutes).
func (a *moneyApp) reconcile(t *testing.T, orderIDs ...int64) {
	t.Helper()
	ctx := context.Background()
	for _, id := range orderIDs {
		for _, q := range []string{
			`UPDATE payments SET updated_at = now() - interval '1 day' WHERE order_id = $1`,
			`UPDATE refunds SET updated_at = now() - interval '1 day' WHERE order_id = $1`,
		} {
			if _, err := a.Pool.Exec(ctx, q, id); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := a.Booking.Worker.Reconcile(ctx); err != nil {
		t.Fatalf("reconcile: %v", err)
	}
	// The periodic job's pass may have taken some of these payments first (each pass
	// puts what it looks up to the back of the line, so this one then skipped them):
	// what that pass settles is waited for. Every lookup in these tests settles its
	// payment, so none is left under way once both passes are done.
	deadline := time.Now().Add(15 * time.Second)
	for count(t, a.Pool, `SELECT count(*) FROM payments WHERE order_id = ANY($1) AND state IN ('pending', 'unknown')`, orderIDs) > 0 {
		if time.Now().After(deadline) {
			t.Fatal("reconcile: payments still under way 15s after the lookup")
		}
		time.Sleep(20 * time.Millisecond) // polling: the periodic pass is a River job of its own
	}
}

// paymentOf returns the provider's id and the idempotency key of the order's latest
// charge attempt.
func paymentOf(t *testing.T, pool *pgxpool.Pool, orderID int64) (providerID, key string) {
	t.Helper()
	var pid *string
	err := pool.QueryRow(context.Background(),
		`SELECT provider_payment_id, idempotency_key FROM payments WHERE order_id = $1 ORDER BY id DESC LIMIT 1`,
		orderID).Scan(&pid, &key)
	if err != nil {
		t.Fatalf("payment of order %d: %v", orderID, err)
	}
	if pid != nil {
		providerID = *pid
	}
	return providerID, key
}

// payAs pays an order with card, simulating delivery, and returns the status and the
// answer (or the error code).
func (c *client) payAs(orderID int64, card, delivery string, header http.Header) (int, web.PayAnswerJSON, string) {
	c.t.Helper()
	st, raw, _, err := c.send(context.Background(), "POST", "/api/v1/orders/"+itoa(orderID)+"/pay",
		map[string]string{"card": card, "delivery": delivery}, header)
	if err != nil {
		c.t.Fatal(err)
	}
	var ans web.PayAnswerJSON
	if st >= 400 {
		e, perr := parseError(raw)
		if perr != nil {
			c.t.Fatalf("pay order %d: %v", orderID, perr)
		}
		return st, ans, e.Error
	}
	if err := json.Unmarshal(raw, &ans); err != nil {
		c.t.Fatalf("pay order %d: answer %d is not JSON: %q", orderID, st, raw)
	}
	return st, ans, ""
}

// order reads an order through the API.
func (c *client) order(id int64) web.OrderJSON {
	c.t.Helper()
	var o web.OrderJSON
	if st := c.do("GET", "/api/v1/orders/"+itoa(id), nil, &o); st != http.StatusOK {
		c.t.Fatalf("order %d: got status %d, want 200", id, st)
	}
	return o
}

// orderNote is the text of the order page's status, as the buyer reads it.
func (c *client) orderNote(id int64) string {
	c.t.Helper()
	p := c.page(web.OrderURL(id), false)
	if p.status != http.StatusOK {
		c.t.Fatalf("order page %d: got status %d, want 200", id, p.status)
	}
	return strings.Join(strings.Fields(p.doc.Find(".order-note").Text()), " ")
}

// soldToBuyer counts the seats sold to a buyer's orders on an event, and the seats
// their live holds keep.
func soldAndHeld(t *testing.T, pool *pgxpool.Pool, eventID int64, orderIDs []int64, holdIDs []string) (sold, held int) {
	t.Helper()
	sold = count(t, pool, `SELECT count(*) FROM seats WHERE event_id = $1 AND order_id = ANY($2)`, eventID, orderIDs)
	for _, h := range holdIDs {
		held += count(t, pool, `SELECT count(*) FROM seats s JOIN holds h ON h.event_id = s.event_id AND h.id = s.held_by
			WHERE s.event_id = $1 AND h.event_id || '-' || h.id = $2 AND s.hold_expires_at > now() AND s.sold_at IS NULL`, eventID, h)
	}
	return sold, held
}

// waitOrderWhere polls the order until cond holds, with a deadline: a bound on a hang,
// not a speed requirement. It is generous because a job that failed once under a
// loaded machine (make test runs every package at once on two cores) is retried after
// River's backoff, 16 s for a second retry.
func waitOrderWhere(t *testing.T, c *client, id int64, what string, cond func(web.OrderJSON) bool) web.OrderJSON {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		o := c.order(id)
		if cond(o) {
			return o
		}
		if time.Now().After(deadline) {
			t.Fatalf("order %d: waiting for %s, got %+v", id, what, o)
		}
		time.Sleep(20 * time.Millisecond) // polling, as a client does: webhooks and jobs are asynchronous
	}
}

// refundsDone reports whether an order has n refunds, all done.
func refundsDone(n int) func(web.OrderJSON) bool {
	return func(o web.OrderJSON) bool {
		if len(o.Refunds) != n {
			return false
		}
		for _, r := range o.Refunds {
			if r.Status != "refunded" {
				return false
			}
		}
		return true
	}
}

const (
	cardOK        = "4242 4242 4242 4242"
	cardDeclined  = "4000 0000 0000 0002"
	cardFailLater = "4000 0000 0000 0341"
)
