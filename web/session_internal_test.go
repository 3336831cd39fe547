package web

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/alexedwards/scs/v2"
	"github.com/alexedwards/scs/v2/memstore"
	"github.com/labstack/echo/v4"
)

// TestSessionSavedThenChanged: a handler that saves the session and then changes it
// again has the change written too (once more); one that saves and changes nothing
// after is written once. The answer's commit used to be skipped whenever a handler had
// saved, and what came after the save was lost.
func TestSessionSavedThenChanged(t *testing.T) {
	t.Parallel()
	store := &countingStore{Store: memstore.New()}
	sm := scs.New()
	sm.Store = store
	e := echo.New()
	e.Use(loadSessions(sm, slog.New(slog.DiscardHandler)))
	e.GET("/:then", func(c echo.Context) error {
		ctx := c.Request().Context()
		sm.Put(ctx, "first", "1")
		if err := saveSessionOf(c, sm); err != nil {
			return err
		}
		if c.Param("then") == "change" {
			sm.Put(ctx, "after", "2")
		}
		return c.String(http.StatusOK, "ok")
	})
	for _, tc := range []struct {
		then    string
		commits int64
		after   string
	}{{"change", 2, "2"}, {"nothing", 1, ""}} {
		before := store.commits.Load()
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/"+tc.then, nil))
		if n := store.commits.Load() - before; n != tc.commits {
			t.Errorf("%s after the save: %d writes, want %d", tc.then, n, tc.commits)
		}
		var token string
		for _, ck := range rec.Result().Cookies() {
			if ck.Name == sm.Cookie.Name {
				token = ck.Value
			}
		}
		ctx, err := sm.Load(context.Background(), token)
		if err != nil {
			t.Fatal(err)
		}
		if got := sm.GetString(ctx, "first"); got != "1" {
			t.Errorf("%s after the save: first %q, want 1", tc.then, got)
		}
		if got := sm.GetString(ctx, "after"); got != tc.after {
			t.Errorf("%s after the save: after %q, want %q", tc.then, got, tc.after)
		}
	}
}

// countingStore counts the session writes.
type countingStore struct {
	scs.Store
	commits atomic.Int64
}

func (s *countingStore) Commit(token string, b []byte, expiry time.Time) error {
	s.commits.Add(1)
	return s.Store.Commit(token, b, expiry)
}
