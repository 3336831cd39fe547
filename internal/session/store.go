// Package session keeps scs sessions in PostgreSQL, and builds the buyers' and staff's
// session managers and names their cookies (cookie.go). Sessions live next to the
// holds they own, so flushing Redis neither loses a buyer's hold nor logs staff out.
//
// It imports the generated queries (internal/db) and scs, never web: web's session
// middleware uses it.
package session

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"boxoffice/internal/db"
	"boxoffice/internal/dberr"
	"boxoffice/internal/groupcommit"
	"boxoffice/internal/iowait"
	"boxoffice/internal/ticker"
)

// CacheFor is how long a session read from PostgreSQL is served from memory. Every
// API call loads its session, and at an onsale that lookup would be about a third of
// the database's work per hold. A change through this process updates the memory at
// once, and one through another instance is seen here within CacheFor. A buyer's
// session gets a new token when an order is created (web: renewSession), and its old
// token is deleted: at once here, and within CacheFor on another instance that served
// it. What a buyer's session gains later (an admission token, the queue's starting
// place) is harmless late: an instance that has not seen the token yet sends the
// buyer to the queue page, which finds the admission in Redis and stores it again.
// Staff sessions, whose logout must end them everywhere at once, use
// NewUncachedStore.
//
// It must outlast the pace at which a waiting page looks (waitroom.MaxLook, a minute;
// between looks the page reads the queue's public board, which needs no session), or
// a crowd of waiting pages asks PostgreSQL at every look. At 15 s, with pages that
// look every 15 s, about 50,000 of make onsale's statements are session finds, one
// for nearly every look; at five minutes a waiter far back misses once in five looks.
const CacheFor = 5 * time.Minute

// maxCached bounds the memory: past it the cache starts again empty.
const maxCached = 100_000

// Store is an scs.CtxStore over the sessions table. scs's own pgxstore ignores the
// request's context, so a stalled database would hold a request past its deadline;
// this one passes the context down.
type Store struct {
	q        *db.Queries
	writesQ  *db.Queries   // the pool CommitCtx's batches run on: q's unless SetWrites
	cacheFor time.Duration // 0: every find asks PostgreSQL

	mu    sync.Mutex
	cache map[string]cached

	writes groupcommit.Writer[*write, struct{}] // CommitCtx's batches
}

type cached struct {
	data   []byte
	expiry time.Time // the session's own
	until  time.Time // when to ask PostgreSQL again
}

// NewStore returns a Store on pool that serves sessions from memory for CacheFor.
func NewStore(pool *pgxpool.Pool) *Store {
	return newStore(pool, CacheFor)
}

// NewUncachedStore returns a Store on pool that asks PostgreSQL on every find. Staff
// sessions use it: a logout on one instance must end the session on all of them at
// once, not within CacheFor.
func NewUncachedStore(pool *pgxpool.Pool) *Store {
	return newStore(pool, 0)
}

func newStore(pool *pgxpool.Pool, cacheFor time.Duration) *Store {
	q := db.New(pool)
	s := &Store{q: q, writesQ: q, cacheFor: cacheFor, cache: make(map[string]cached)}
	s.writes = groupcommit.Writer[*write, struct{}]{Run: s.writeBatch, Max: maxBatch, Timeout: writeTimeout}
	return s
}

// SetWrites sends the batches of session writes to pool, a connection of their own
// apart from the sale's pool and its gate (app: App.Writes), where at an onsale's
// admissions they would wait behind the sale's transactions with every admitted
// buyer's first call waiting for them. Finds and deletes stay on the store's pool.
// Call it before the store is used.
func (s *Store) SetWrites(pool *pgxpool.Pool) { s.writesQ = db.New(pool) }

// WriteStats are the counts of the session writes and their batches, for the metrics.
func (s *Store) WriteStats() groupcommit.Stats { return s.writes.Stats() }

// FindCtx returns a live session's data.
func (s *Store) FindCtx(ctx context.Context, token string) ([]byte, bool, error) {
	now := time.Now()
	s.mu.Lock()
	c, ok := s.cache[token]
	s.mu.Unlock()
	if ok && now.Before(c.until) && now.Before(c.expiry) {
		return c.data, true, nil
	}
	row, err := s.q.SessionFind(ctx, token)
	if errors.Is(err, pgx.ErrNoRows) {
		s.forget(token)
		return nil, false, nil
	} else if err != nil {
		return nil, false, dberr.Translate(err)
	}
	s.remember(token, row.Data, row.Expiry)
	return row.Data, true, nil
}

// CommitCtx saves a session's data until expiry, and returns once it is written. The
// writes that arrive while one is in flight go together as the next batch, one
// statement for them all (queries/sessions.sql): at an onsale's arrival burst every
// newcomer's first call writes its session, about 500 a second in make onsale, and
// one at a time they would take as many of the pool's connections and commits from the
// sale's steps. Alone, a write goes at once. The write commits asynchronously
// (queries/sessions.sql says why nothing that matters can be lost); it is always a
// statement of its own, never part of another transaction, which it would make
// asynchronous too.
func (s *Store) CommitCtx(ctx context.Context, token string, b []byte, expiry time.Time) error {
	defer iowait.TimeBatched(ctx)()
	_, err := s.writes.Do(ctx, &write{token: token, data: b, expiry: expiry})
	// A write the caller stopped waiting for may still land; the caller sends no
	// cookie for it, so it is a session nobody holds, removed when it expires.
	return dberr.Translate(err)
}

// write is one CommitCtx waiting for its batch.
type write struct {
	token  string
	data   []byte
	expiry time.Time
}

// maxBatch bounds the sessions one statement writes.
const maxBatch = 1000

// writeTimeout bounds one batch's statement. The batch is not any one request's, so it
// runs under no request's context; each request stops waiting at its own deadline.
const writeTimeout = 10 * time.Second

// writeBatch writes one batch and keeps what it wrote in memory (or forgets it, when
// the write failed), in order: a token's last write is what stays. A token written
// twice in it is written once, with its later data: two writes of one session that
// reached the store together, in the order they reached it.
func (s *Store) writeBatch(ctx context.Context, batch []*write) ([]struct{}, error) {
	p := db.SessionCommitParams{
		Tokens:   make([]string, 0, len(batch)),
		Data:     make([][]byte, 0, len(batch)),
		Expiries: make([]time.Time, 0, len(batch)),
	}
	at := make(map[string]int, len(batch))
	for _, w := range batch {
		if i, ok := at[w.token]; ok {
			p.Data[i], p.Expiries[i] = w.data, w.expiry
			continue
		}
		at[w.token] = len(p.Tokens)
		p.Tokens = append(p.Tokens, w.token)
		p.Data = append(p.Data, w.data)
		p.Expiries = append(p.Expiries, w.expiry)
	}
	err := s.writesQ.SessionCommit(ctx, p)
	for _, w := range batch {
		if err != nil {
			s.forget(w.token)
		} else {
			s.remember(w.token, w.data, w.expiry)
		}
	}
	return nil, err
}

// DeleteCtx removes a session.
func (s *Store) DeleteCtx(ctx context.Context, token string) error {
	s.forget(token)
	return dberr.Translate(s.q.SessionDelete(ctx, token))
}

func (s *Store) remember(token string, data []byte, expiry time.Time) {
	if s.cacheFor == 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.cache) >= maxCached {
		clear(s.cache)
	}
	s.cache[token] = cached{data: data, expiry: expiry, until: time.Now().Add(s.cacheFor)}
}

func (s *Store) forget(token string) {
	s.mu.Lock()
	delete(s.cache, token)
	s.mu.Unlock()
}

// Find is FindCtx without a context, for scs's Store interface.
func (s *Store) Find(token string) ([]byte, bool, error) {
	return s.FindCtx(context.Background(), token)
}

// Commit is CommitCtx without a context.
func (s *Store) Commit(token string, b []byte, expiry time.Time) error {
	return s.CommitCtx(context.Background(), token, b, expiry)
}

// Delete is DeleteCtx without a context.
func (s *Store) Delete(token string) error { return s.DeleteCtx(context.Background(), token) }

// Cleanup deletes expired sessions every interval until ctx ends.
func (s *Store) Cleanup(ctx context.Context, interval time.Duration) {
	ticker.Every(ctx, interval, func() {
		_, _ = s.q.SessionDeleteExpired(ctx)
		now := time.Now()
		s.mu.Lock()
		for k, c := range s.cache {
			if now.After(c.until) {
				delete(s.cache, k)
			}
		}
		s.mu.Unlock()
	})
}
