package booking

import (
	"bytes"
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"boxoffice/internal/db"
	"boxoffice/internal/groupcommit"
	"boxoffice/internal/iowait"
	"boxoffice/internal/pending"
)

// Idempotency keys of the JSON API. A client that sends a POST with an
// Idempotency-Key and loses the answer (a commit acknowledged too late, a dropped
// connection) sends it again with the same key and gets the first answer, instead of a
// second hold, order or charge. The key is taken (a row, committed at once) before the
// request runs, so that a concurrent repeat waits its turn rather than running too,
// and the answer is stored after: after it went out (SaveIdempotentAfter), while a
// repeat of the key on this instance waits for the save rather than hearing "in use".

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

// idemKey names a key: its buyer's and its own.
type idemKey struct{ buyer, key string }

// idemClaim is one request's claim of its key, and idemSave its answer.
type (
	idemClaim struct {
		idemKey
		hash []byte
	}
	idemSave struct {
		idemKey
		status int32
		body   []byte
	}
)

// idempotencyWriters gather the keys' claims and saves into batches, one statement
// each (groupcommit): every keyed API call (a hold, an added seat, a checkout, a
// payment) claims its key before it runs and saves its answer after, at an onsale
// four of each per buyer, which one by one took as many of the pool's connections,
// round trips and commits as the calls themselves did.
//
// The batches run on a connection of their own when one is set (Services.SetWrites):
// a key's write takes a tenth of a millisecond and commits asynchronously, and in the
// sale's pool it waits at the gate behind the checkouts' and payments' transactions,
// tens of milliseconds in a busy second, and every keyed call waits for it twice. A
// batch waiting there also keeps the next batch's calls waiting behind it (make
// onsale: the keyed calls' p50 doubled), and marked first it would keep every usual
// call out of the pool's queue (dbgate).
type idempotencyWriters struct {
	q      *db.Queries // the pool the batches run on
	claims groupcommit.Writer[idemClaim, bool]
	saves  groupcommit.Writer[idemSave, struct{}]
	after  pending.Set[idemKey] // the answers being saved after they went out
}

func (s *store) initIdempotency() {
	s.idem.q = s.q
	s.idem.claims = groupcommit.Writer[idemClaim, bool]{Run: s.claimKeys}
	s.idem.saves = groupcommit.Writer[idemSave, struct{}]{Run: s.saveAnswers}
}

// claimKeys claims a batch's keys; true: taken for its request. A key named twice in
// the batch (two requests with it at once) is claimed for the first only: the other
// finds it taken, as it would one batch later.
func (s *store) claimKeys(ctx context.Context, batch []idemClaim) ([]bool, error) {
	p := db.IdempotencyKeysClaimParams{
		TtlSeconds: s.cfg.IdempotencyTTL.Seconds(), StaleSeconds: idempotencyStale.Seconds(),
		Buyers: make([]string, 0, len(batch)), Keys: make([]string, 0, len(batch)), RequestHashes: make([][]byte, 0, len(batch)),
	}
	at := make(map[idemKey]int, len(batch)) // each key's first call
	for i, c := range batch {
		if _, ok := at[c.idemKey]; ok {
			continue
		}
		at[c.idemKey] = i
		p.Buyers, p.Keys, p.RequestHashes = append(p.Buyers, c.buyer), append(p.Keys, c.key), append(p.RequestHashes, c.hash)
	}
	rows, err := s.idem.q.IdempotencyKeysClaim(ctx, p)
	if err != nil {
		return nil, err
	}
	taken := make([]bool, len(batch))
	for _, r := range rows {
		taken[at[idemKey{r.Buyer, r.Key}]] = true
	}
	return taken, nil
}

// saveAnswers stores a batch's answers.
func (s *store) saveAnswers(ctx context.Context, batch []idemSave) ([]struct{}, error) {
	p := db.IdempotencyKeysSaveParams{
		Buyers: make([]string, len(batch)), Keys: make([]string, len(batch)),
		Statuses: make([]int32, len(batch)), Bodies: make([][]byte, len(batch)),
	}
	for i, a := range batch {
		p.Buyers[i], p.Keys[i], p.Statuses[i], p.Bodies[i] = a.buyer, a.key, a.status, a.body
	}
	return nil, s.idem.q.IdempotencyKeysSave(ctx, p)
}

// BeginIdempotent takes key for the buyer's request, which requestHash identifies
// (method, path and body). nil, nil: the caller runs the request, then calls
// FinishIdempotent. An answer: the request ran before; replay it. Or
// ErrIdempotencyKeyReused, or ErrIdempotencyKeyInUse.
func (s *Buyer) BeginIdempotent(ctx context.Context, buyer, key string, requestHash []byte) (*IdempotentAnswer, error) {
	if err := s.idem.after.Wait(ctx, idemKey{buyer, key}); err != nil {
		return nil, translate(err)
	}
	// The claim is waited for even if the request goes away meanwhile (a batch takes
	// milliseconds, bounded by its own timeout), so that a key claimed for a request
	// that will not run is given back at once: its client's repeat runs rather than
	// hearing "in use" until the key goes stale.
	end := iowait.TimeBatched(ctx)
	taken, err := s.idem.claims.Do(context.WithoutCancel(ctx), idemClaim{idemKey{buyer, key}, requestHash})
	end()
	switch {
	case err != nil:
		return nil, translate(err)
	case taken && ctx.Err() != nil:
		if err := s.q.IdempotencyKeyRelease(context.WithoutCancel(ctx), db.IdempotencyKeyReleaseParams{Buyer: buyer, Key: key}); err != nil {
			s.log.WarnContext(ctx, "idempotency key of a request gone away not given back", "key", key, "err", err)
		}
		return nil, translate(ctx.Err())
	case taken:
		return nil, nil
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
	if status == 0 {
		return translate(s.q.IdempotencyKeyRelease(ctx, db.IdempotencyKeyReleaseParams{Buyer: buyer, Key: key}))
	}
	end := iowait.TimeBatched(ctx)
	_, err := s.idem.saves.Do(ctx, idemSave{idemKey{buyer, key}, int32(status), body})
	end()
	return translate(err)
}

// SaveIdempotentAfter is FinishIdempotent for an answer that has gone out: it returns
// at once and saves the answer meanwhile, and logs a save that failed. A buyer waits
// for its answer, not for the key's bookkeeping: the save is a batch on the writes'
// connection, one more wait of a keyed call in a busy second. A repeat of the key on
// this instance waits for the save and replays the answer (BeginIdempotent); one on
// another instance within those milliseconds hears ErrIdempotencyKeyInUse, as while
// the first request runs. DrainIdempotent waits for the saves under way.
func (s *Buyer) SaveIdempotentAfter(ctx context.Context, buyer, key string, status int, body []byte) {
	ctx = iowait.Detach(context.WithoutCancel(ctx))
	s.idem.after.Go(idemKey{buyer, key}, func() {
		if err := s.FinishIdempotent(ctx, buyer, key, status, body); err != nil {
			// The key stays taken by a request that never finished; repeats of it run
			// again once it is stale (idempotencyStale).
			s.log.WarnContext(ctx, "idempotent answer not kept", "key", key, "err", err)
		}
	})
}

// DrainIdempotent waits until the answers being saved after they went out
// (SaveIdempotentAfter) are saved, or ctx ends: a program stopping calls it before it
// closes its pools.
func (s *Services) DrainIdempotent(ctx context.Context) error { return s.store.idem.after.Drain(ctx) }
