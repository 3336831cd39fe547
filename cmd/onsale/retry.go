package main

import (
	"context"
	"net/http"
	"strconv"
	"time"
)

// try makes a call and records its latency; false means no answer came (the time
// limit, or a transport error, which is counted).
func (b *buyer) try(ctx context.Context, step, method, path string, body, out any) (answer, bool) {
	a, err := b.c.do(ctx, method, path, body, out)
	return b.answered(ctx, step, a, err)
}

// answered records a call's answer (its latency), or counts that none came: false
// means no answer (the time limit, or a transport error, which is counted).
func (b *buyer) answered(ctx context.Context, step string, a answer, err error) (answer, bool) {
	if err != nil {
		if ctx.Err() != nil {
			b.outcome = outCut
			return a, false
		}
		b.sim.count.unexpected(step + ": " + errKind(err))
		b.outcome = outFailed
		return a, false
	}
	b.sim.called(step, a)
	return a, true
}

// send makes a call that creates something (a hold, an added seat, an order, a
// charge) as a careful client does: with an Idempotency-Key of its own and, when no
// answer came or the answer is a 502 or a 503 (an instance gone mid-request, a
// moment's overload), once more with the same key after the Retry-After asked for.
// The server answers a repeated key with its first answer, or runs the request if the
// first never finished, so the repeat cannot hold, order or charge twice. A repeat
// told that the first is still running (409 idempotency_key_in_use: its instance died
// holding the key, which goes stale after a minute) asks again after its Retry-After
// while the visit lasts. Each repeat is counted with its first and last answers.
// Without -idempotency-keys it is try.
func (b *buyer) send(ctx context.Context, step, method, path string, body, out any) (answer, bool) {
	if !b.sim.cfg.Keys {
		return b.try(ctx, step, method, path, body, out)
	}
	b.keys++
	key := "onsale-" + strconv.Itoa(b.id) + "-" + strconv.Itoa(b.keys)
	b.c.key = key
	a, err := b.c.do(ctx, method, path, body, out)
	if !retryable(a, err) || ctx.Err() != nil {
		return b.answered(ctx, step, a, err)
	}
	first := answerKind(a, err)
	if err == nil {
		b.sim.called(step, a)
	}
	if !sleep(ctx, a.RetryAfter) {
		b.sim.count.retry(step + ": " + first + ", cut by the time limit before the repeat")
		b.outcome = outCut
		return a, false
	}
	for {
		b.c.key = key
		a, err = b.c.do(ctx, method, path, body, out)
		if err != nil || a.Status != http.StatusConflict || a.Err.Code != "idempotency_key_in_use" {
			break
		}
		b.sim.called(step, a)
		if !sleep(ctx, max(a.RetryAfter, time.Second)) {
			b.sim.count.retry(step + ": " + first + ", then 409 idempotency_key_in_use until the time limit")
			b.outcome = outCut
			return a, false
		}
	}
	b.sim.count.retry(step + ": " + first + ", then " + answerKind(a, err))
	return b.answered(ctx, step, a, err)
}

// retryable says whether a call is worth repeating with its key: no answer came, or
// the answer says the request may not have run (a 502 from the balancer, a 503).
func retryable(a answer, err error) bool {
	return err != nil || a.Status == http.StatusBadGateway || a.Status == http.StatusServiceUnavailable
}

// answerKind names an answer for the count of repeats: its kind, whether it was a
// replay of the first answer, or why none came.
func answerKind(a answer, err error) string {
	switch {
	case err != nil:
		return errKind(err)
	case a.Replayed:
		return a.kind() + " (the first answer, replayed)"
	}
	return a.kind()
}
