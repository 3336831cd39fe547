package booking

import (
	"bytes"
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"boxoffice/internal/db"
)

// Idempotency keys of the JSON API. A client that sends a POST with an
// Idempotency-Key and loses the answer (a commit acknowledged too late, a dropped
// connection) sends it again with the same key and gets the first answer, instead of a
// second hold, order or charge. The key is taken (a row, committed at once) before the
// request runs, so that a concurrent repeat waits its turn rather than running too,
// and the answer is stored after.

// Idempotency-Key refusals.
var (
	// ErrIdempotencyKeyReused: the key was used by this buyer for another request
	// (another body or address).
	ErrIdempotencyKeyReused = errors.New("idempotency key used for another request")
	// ErrIdempotencyKeyInUse: the first request with this key is still running.
	ErrIdempotencyKeyInUse = errors.New("a request with this idempotency key is still running")
)

// idempotencyStale is how long a key may stay taken by a request that never finished
// before a repeat of the same request may run again: longer than any request runs
// (web gives each 15 s of database work, then its answer is kept or the key given
// back), so only a request whose process died leaves it that long, and a client that
// repeats it after an instance died gets an answer within this time.
const idempotencyStale = 20 * time.Second

// IdempotentAnswer is the stored answer of a request, replayed to its repeats.
type IdempotentAnswer struct {
	Status int
	Body   []byte
}

// BeginIdempotent takes key for the buyer's request, which requestHash identifies
// (method, path and body). nil, nil: the caller runs the request, then calls
// FinishIdempotent. An answer: the request ran before; replay it. Or
// ErrIdempotencyKeyReused, or ErrIdempotencyKeyInUse.
func (s *Buyer) BeginIdempotent(ctx context.Context, buyer, key string, requestHash []byte) (*IdempotentAnswer, error) {
	_, err := s.q.IdempotencyKeyClaim(ctx, db.IdempotencyKeyClaimParams{
		Buyer: buyer, Key: key, RequestHash: requestHash,
		TtlSeconds: s.cfg.IdempotencyTTL.Seconds(), StaleSeconds: idempotencyStale.Seconds(),
	})
	if err == nil {
		return nil, nil
	} else if !errors.Is(err, pgx.ErrNoRows) {
		return nil, translate(err)
	}
	k, err := s.q.IdempotencyKeyGet(ctx, db.IdempotencyKeyGetParams{Buyer: buyer, Key: key})
	if errors.Is(err, pgx.ErrNoRows) {
		// Its first request failed and gave it back just now: this one may run.
		return s.BeginIdempotent(ctx, buyer, key, requestHash)
	} else if err != nil {
		return nil, translate(err)
	}
	switch {
	case !bytes.Equal(k.RequestHash, requestHash):
		return nil, ErrIdempotencyKeyReused
	case k.Status == nil:
		return nil, ErrIdempotencyKeyInUse
	}
	return &IdempotentAnswer{Status: int(*k.Status), Body: k.Body}, nil
}

// FinishIdempotent stores the answer of a request begun with BeginIdempotent. A zero
// status gives the key back instead (the request failed on our side, and a repeat
// should run it again).
func (s *Buyer) FinishIdempotent(ctx context.Context, buyer, key string, status int, body []byte) error {
	var err error
	if status == 0 {
		err = s.q.IdempotencyKeyRelease(ctx, db.IdempotencyKeyReleaseParams{Buyer: buyer, Key: key})
	} else {
		st := int32(status)
		err = s.q.IdempotencyKeySave(ctx, db.IdempotencyKeySaveParams{Buyer: buyer, Key: key, Status: &st, Body: body})
	}
	return translate(err)
}
