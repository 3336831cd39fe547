// Package session keeps scs sessions in PostgreSQL. Sessions live next to the holds
// they own, so flushing Redis neither loses a buyer's hold nor logs staff out.
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
)

// CacheFor is how long a session read from PostgreSQL is served from memory. Every
// API call loads its session, and at an onsale that lookup was about a third of the
// database's work per hold. A buyer's session is never renewed or destroyed; a change
// through this process updates the memory at once, and one through another instance
// is seen here within CacheFor. What a buyer's session gains later (an admission
// token, the queue's starting place) is harmless late: an instance that has not seen
// the token yet sends the buyer to the queue page, which finds the admission in Redis
// and stores it again. Staff sessions, whose logout must end them everywhere at once,
// use NewUncachedStore.
//
// It must outlast the pace at which a waiting page looks (waitroom.MaxLook, a minute;
// between looks the page reads the queue's public board, which needs no session), or
// a crowd of waiting pages asks PostgreSQL at every look. At 15 s (the queue page's
// pace before the board) 49,585 of make onsale's statements were session finds, one
// for nearly every look; at five minutes a waiter far back misses once in five looks.
const CacheFor = 5 * time.Minute

// maxCached bounds the memory: past it the cache starts again empty.
const maxCached = 100_000

// Store is an scs.CtxStore over the sessions table. scs's own pgxstore ignores the
// request's context, so a stalled database would hold a request past its deadline;
// this one passes the context down.
type Store struct {
	q        *db.Queries
	cacheFor time.Duration // 0: every find asks PostgreSQL

	mu    sync.Mutex
	cache map[string]cached
}

type cached struct {
	data   []byte
	expiry time.Time // the session's own
	until  time.Time // when to ask PostgreSQL again
}

// NewStore returns a Store on pool that serves sessions from memory for CacheFor.
func NewStore(pool *pgxpool.Pool) *Store {
	return &Store{q: db.New(pool), cacheFor: CacheFor, cache: make(map[string]cached)}
}

// NewUncachedStore returns a Store on pool that asks PostgreSQL on every find. Staff
// sessions use it: a logout on one instance must end the session on all of them at
// once, not within CacheFor.
func NewUncachedStore(pool *pgxpool.Pool) *Store {
	return &Store{q: db.New(pool), cache: make(map[string]cached)}
}

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

// CommitCtx saves a session's data until expiry. The write commits asynchronously
// (queries/sessions.sql says why nothing that matters can be lost); it is always a
// statement of its own, never part of another transaction, which it would make
// asynchronous too.
func (s *Store) CommitCtx(ctx context.Context, token string, b []byte, expiry time.Time) error {
	if err := s.q.SessionCommit(ctx, db.SessionCommitParams{Token: token, Data: b, Expiry: expiry}); err != nil {
		s.forget(token)
		return dberr.Translate(err)
	}
	s.remember(token, b, expiry)
	return nil
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
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			_, _ = s.q.SessionDeleteExpired(ctx)
			now := time.Now()
			s.mu.Lock()
			for k, c := range s.cache {
				if now.After(c.until) {
					delete(s.cache, k)
				}
			}
			s.mu.Unlock()
		}
	}
}
