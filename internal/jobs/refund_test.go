package jobs_test

import (
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river/rivertype"

	"boxoffice/internal/jobs"
)

// TestRefundDueAgain: a refund queued while its job is still to run is one job; queued
// again after that job completed (the provider failed the refund, and booking makes it
// again) it is a new job, which runs.
func TestRefundDueAgain(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	due := func() {
		t.Helper()
		h.inTx(t, true, func(tx pgx.Tx) error { return h.q.RefundDue(t.Context(), tx, 77) })
	}
	due()
	due()
	if got := h.jobs(t, jobs.RefundDue{}.Kind()); len(got) != 1 {
		t.Fatalf("refund queued twice before it ran: got jobs %v, want one", states(got))
	}
	h.run(t, h.q)
	h.waitIdle(t)
	due()
	h.waitIdle(t)
	got := h.jobs(t, jobs.RefundDue{}.Kind())
	if len(got) != 2 || got[0].State != rivertype.JobStateCompleted || got[1].State != rivertype.JobStateCompleted {
		t.Errorf("refund queued again after its job completed: got jobs %v, want two completed", states(got))
	}
	if n := h.fake.refunds(77); n != 2 {
		t.Errorf("RunRefund called %d times, want 2", n)
	}
}
