package booking

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"time"

	"boxoffice/internal/db"
	"boxoffice/internal/dbgate"
	"boxoffice/internal/iowait"
)

// Exact holds that arrive together are run together: a few workers each take every
// hold waiting in the queue (up to maxBatch) and run them as one transaction, all the
// hold_seats calls in one round trip and one commit. An onsale's cost is mostly
// commits and round trips, and PostgreSQL on two cores claims several times more
// seats per second batched than one by one. Nothing about the verdict changes: each
// call is still all or nothing under its row locks, and a later call in a batch sees
// the earlier ones' seats as taken. When idle, a hold runs alone at once: batching
// never waits for company.
//
// A batch whose commit fails may have committed all the same (the connection lost
// while the commit was on its way back): its calls are then run one by one, and a call
// the batch had answered "held" first asks whether its hold has its seats, which
// means the batch committed, and is answered so; run again it would find its own
// seats taken. A queued call whose request has gone away (its context ended) is
// answered so and never runs: no one would hear of the seats it held.
const (
	maxBatch     = 32
	batchWorkers = 4
	workerIdle   = time.Second
	batchTimeout = 10 * time.Second
)

type exactCall struct {
	params   db.SeatsHoldExactParams
	min, max int64 // lowest and highest seat id
	done     chan exactAnswer
	// gone is the request's context's Done: closed once no one waits for the hold.
	gone <-chan struct{}
	// unsure is the call's "held" answer in a batch whose commit went unanswered.
	unsure []db.SeatsHoldExactRow
}

// errGone answers a call whose request went away before it ran.
var errGone = errors.New("booking: the hold's request went away before it ran")

func newExactCall(p db.SeatsHoldExactParams, gone <-chan struct{}) *exactCall {
	return &exactCall{params: p, min: slices.Min(p.SeatIds), max: slices.Max(p.SeatIds), done: make(chan exactAnswer, 1), gone: gone}
}

// left reports whether the call's request went away.
func (c *exactCall) left() bool {
	select {
	case <-c.gone:
		return true
	default:
		return false
	}
}

type exactAnswer struct {
	rows []db.SeatsHoldExactRow
	err  error
}

// holdExactRows runs one exact hold through the batching workers.
//
// A hold under an access code runs alone: it waits for the code's lock, and in a
// batch that wait could close a cycle with another batch holding a second code it
// waits for. A presale's holds are few (its quota bounds them).
func (s *store) holdExactRows(ctx context.Context, p db.SeatsHoldExactParams) ([]db.SeatsHoldExactRow, error) {
	if p.CodeID != 0 {
		rows, err := s.q.SeatsHoldExact(ctx, p)
		return rows, translate(err)
	}
	c := newExactCall(p, ctx.Done())
	defer iowait.TimeBatched(ctx)()
	select {
	case s.exactQ <- c:
	case <-ctx.Done():
		return nil, translate(ctx.Err())
	}
	s.ensureWorkers()
	// Once queued the hold runs (within batchTimeout) unless the caller has gone by
	// the time a worker takes it; the answer is waited for even if the caller gave
	// up, so that a hold is never made unknown to everyone.
	a := <-c.done
	if errors.Is(a.err, errGone) {
		return nil, translate(ctx.Err())
	}
	return a.rows, a.err
}

// ensureWorkers starts workers up to batchWorkers. Callers queue first and ensure
// after, and a worker leaving checks the queue after it counted itself out, so a
// queued hold always finds a worker.
func (s *store) ensureWorkers() {
	for {
		n := s.workers.Load()
		if n >= batchWorkers {
			return
		}
		if s.workers.CompareAndSwap(n, n+1) {
			go s.exactWorker()
		}
	}
}

func (s *store) exactWorker() {
	idle := time.NewTimer(workerIdle)
	defer idle.Stop()
	for {
		var first *exactCall
		select {
		case first = <-s.exactQ:
		case <-idle.C:
			s.workers.Add(-1)
			if len(s.exactQ) > 0 {
				s.ensureWorkers()
			}
			return
		}
		batch := []*exactCall{first}
	drain:
		for len(batch) < maxBatch {
			select {
			case c := <-s.exactQ:
				batch = append(batch, c)
			default:
				break drain
			}
		}
		s.runExact(batch)
		idle.Reset(workerIdle)
	}
}

// runExact runs a batch. Seat locks are taken in ascending seat order within a call;
// for a batch to do the same (so that two batches cannot deadlock on seats) it takes
// calls in order of their lowest seat and only those whose seats all come after the
// previous call's, one call per buyer. The others run alone afterwards, as do the
// calls whose client network another transaction was busy with (runTogether).
func (s *store) runExact(batch []*exactCall) {
	batch = slices.DeleteFunc(batch, answerGone)
	slices.SortFunc(batch, func(a, b *exactCall) int { return cmp.Compare(a.min, b.min) })
	var together, alone []*exactCall
	buyers := map[string]bool{}
	last := int64(0)
	for _, c := range batch {
		if c.min > last && !buyers[c.params.Buyer] {
			together = append(together, c)
			buyers[c.params.Buyer] = true
			last = c.max
		} else {
			alone = append(alone, c)
		}
	}
	if len(together) == 1 {
		alone = append(together, alone...)
	} else if busy, err := s.runTogether(together); err != nil {
		// The batch failed as a whole (it wrote nothing): each on its own.
		alone = append(together, alone...)
	} else {
		alone = append(alone, busy...)
	}
	for _, c := range alone {
		if answerGone(c) {
			continue
		}
		ctx, cancel := context.WithTimeout(dbgate.First(context.Background()), batchTimeout)
		c.done <- s.runAlone(ctx, c)
		cancel()
	}
}

// answerGone answers a call whose request went away, which then never runs, and
// reports whether it did.
func answerGone(c *exactCall) bool {
	if !c.left() {
		return false
	}
	c.done <- exactAnswer{err: errGone}
	return true
}

// runAlone runs one call on its own. A call answered "held" in a batch whose commit
// went unanswered is answered that, with its hold, if the hold has its seats: the
// batch committed. If it has none, the batch did not, and the call runs again.
func (s *store) runAlone(ctx context.Context, c *exactCall) exactAnswer {
	if c.unsure != nil {
		p := c.params
		n, err := s.q.HoldSeatsHeld(ctx, db.HoldSeatsHeldParams{EventID: p.EventID, HoldID: &c.unsure[0].HoldID, SeatIds: p.SeatIds, Buyer: p.Buyer})
		if err != nil {
			return exactAnswer{err: translate(err)} // still unknown, to the buyer too
		}
		if int(n) == len(p.SeatIds) {
			s.log.Info("hold committed in a batch whose commit went unanswered", "event", p.EventID, "hold", c.unsure[0].HoldID)
			return exactAnswer{rows: c.unsure}
		}
	}
	rows, err := s.q.SeatsHoldExact(ctx, c.params)
	return exactAnswer{rows: rows, err: translate(err)}
}

// runTogether runs the calls in one transaction and answers them once it committed,
// all but those that held nothing because another transaction had their client
// network's lock (hold_seats_client's 'busy', which never waits: a batch waiting for
// a network could wait for a batch that waits for one of its seats). It returns those,
// to be run alone.
func (s *store) runTogether(calls []*exactCall) (busy []*exactCall, err error) {
	ctx, cancel := context.WithTimeout(dbgate.First(context.Background()), batchTimeout)
	defer cancel()
	tx, err := db.Begin(ctx, s.pool) // the begin goes with the batch
	if err != nil {
		return nil, err
	}
	defer tx.Rollback(ctx) //nolint:errcheck // after Commit it is a no-op
	params := make([]db.SeatsHoldExactBatchParams, len(calls))
	for i, c := range calls {
		params[i] = db.SeatsHoldExactBatchParams(c.params)
	}
	answers := make([]exactAnswer, len(calls))
	var failed error
	br := s.q.WithTx(tx).SeatsHoldExactBatch(ctx, params)
	br.Query(func(i int, rows []db.SeatsHoldExactBatchRow, err error) {
		if err != nil {
			failed = err
			return
		}
		for _, r := range rows {
			answers[i].rows = append(answers[i].rows, db.SeatsHoldExactRow(r))
		}
	})
	if err := br.Close(); err != nil && failed == nil {
		failed = err
	}
	if failed != nil {
		s.log.Warn("batch of holds failed; running them one by one", "holds", len(calls), "err", failed)
		return nil, failed
	}
	if err := tx.Commit(ctx); err != nil {
		// Committed or not: runAlone finds out for each call that held.
		for i, c := range calls {
			if len(answers[i].rows) > 0 && answers[i].rows[0].Status == "held" {
				c.unsure = answers[i].rows
			}
		}
		return nil, err
	}
	s.batches.Add(1)
	for i, c := range calls {
		if rows := answers[i].rows; len(rows) > 0 && rows[0].Status == "busy" {
			busy = append(busy, c)
			continue
		}
		c.done <- answers[i]
	}
	return busy, nil
}
