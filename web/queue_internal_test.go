package web

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
)

// TestLookSlots: a waiting page's look is served only when one of the look slots is
// free; it waits for one (and gives up with its client), while everything else goes
// by, and after maxLookWait goes ahead anyway. The queue page itself, a first visit,
// is never held back; its htmx look is.
func TestLookSlots(t *testing.T) {
	t.Parallel()
	s := &server{looks: make(chan struct{}, 1), lookWait: time.Hour} // no look goes ahead unasked
	served := make(chan string, 4)
	h := func(c echo.Context) error { served <- c.Request().URL.Path; return nil }
	call := func(mw echo.MiddlewareFunc, ctx context.Context, htmx bool) chan error {
		req := httptest.NewRequest(http.MethodGet, "/look", nil).WithContext(ctx)
		if htmx {
			req.Header.Set("HX-Request", "true")
		}
		done := make(chan error, 1)
		go func() { done <- mw(h)(echo.New().NewContext(req, httptest.NewRecorder())) }()
		return done
	}
	s.looks <- struct{}{} // every slot taken

	ctx, cancel := context.WithCancel(t.Context())
	gone := call(s.lookSlots, ctx, false)
	waiting := call(s.lookSlots, t.Context(), false)
	pageLook := call(s.pageLookSlots, t.Context(), true)
	if err := <-call(s.pageLookSlots, t.Context(), false); err != nil || len(served) != 1 {
		t.Fatalf("the queue page itself: got %v with %d served, want it served at once", err, len(served))
	}
	<-served
	select {
	case <-served:
		t.Fatal("a look was served with every slot taken")
	case <-time.After(50 * time.Millisecond):
	}
	cancel()
	if err := <-gone; !errors.Is(err, context.Canceled) {
		t.Errorf("a look whose client left: got %v, want context.Canceled", err)
	}
	<-s.looks // a slot comes free: the two looks left go in, one after the other
	for _, done := range []chan error{waiting, pageLook} {
		if err := <-done; err != nil {
			t.Errorf("look: got %v, want served", err)
		}
	}
	if n := len(served); n != 2 {
		t.Errorf("got %d looks served, want 2", n)
	}

	// With every slot taken for good, a look still goes ahead after lookWait.
	s.looks <- struct{}{}
	s.lookWait = time.Millisecond
	if err := <-call(s.lookSlots, t.Context(), false); err != nil || len(served) != 3 {
		t.Errorf("a look with every slot taken past maxLookWait: got %v with %d served, want it served", err, len(served))
	}
}
