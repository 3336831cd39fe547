package jobs_test

import (
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river/rivertype"

	"boxoffice/internal/jobs"
)

// TestRefundDueAgain: a refund's attempt is one job, however often it is queued, also
// after that job completed; the next attempt (the provider failed the refund, and
// booking makes it again) is a job of its own, which runs.
func TestRefundDueAgain(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	due := func(attempt int) {
		t.Helper()
		h.inTx(t, true, func(tx pgx.Tx) error { return h.q.RefundDue(t.Context(), tx, 77, attempt) })
	}
	due(1)
	due(1)
	if got := h.jobs(t, jobs.RefundDue{}.Kind()); len(got) != 1 {
		t.Fatalf("refund queued twice before it ran: got jobs %v, want one", states(got))
	}
	h.run(t, h.q)
	h.waitIdle(t)
	due(1)
	due(2)
	h.waitIdle(t)
	got := h.jobs(t, jobs.RefundDue{}.Kind())
	if len(got) != 2 || got[0].State != rivertype.JobStateCompleted || got[1].State != rivertype.JobStateCompleted {
		t.Errorf("the first attempt queued again and the second: got jobs %v, want two completed", states(got))
	}
	if n := h.fake.refunds(77); n != 2 {
		t.Errorf("RunRefund called %d times, want 2", n)
	}
}
