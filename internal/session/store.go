// Package session keeps scs sessions in PostgreSQL. Sessions live next to the holds
// they own, so flushing Redis neither loses a buyer's hold nor logs staff out.
package session

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"boxoffice/internal/db"
	"boxoffice/internal/dberr"
)

// Store is an scs.CtxStore over the sessions table. scs's own pgxstore ignores the
// request's context, so a stalled database would hold a request past its deadline;
// this one passes the context down.
type Store struct{ q *db.Queries }

// NewStore returns a Store on pool.
func NewStore(pool *pgxpool.Pool) *Store { return &Store{q: db.New(pool)} }

// FindCtx returns a live session's data.
func (s *Store) FindCtx(ctx context.Context, token string) ([]byte, bool, error) {
	b, err := s.q.SessionFind(ctx, token)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, false, nil
	}
	return b, err == nil, dberr.Translate(err)
}

// CommitCtx saves a session's data until expiry.
func (s *Store) CommitCtx(ctx context.Context, token string, b []byte, expiry time.Time) error {
	return dberr.Translate(s.q.SessionCommit(ctx, db.SessionCommitParams{Token: token, Data: b, Expiry: expiry}))
}

// DeleteCtx removes a session.
func (s *Store) DeleteCtx(ctx context.Context, token string) error {
	return dberr.Translate(s.q.SessionDelete(ctx, token))
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
		}
	}
}
