package web

import (
	"context"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"

	"boxoffice/internal/app"
)

// TestClientGoneIsNot500: a handler that fails because its client hung up is logged
// as 499 at info level, not as a server error.
func TestClientGoneIsNot500(t *testing.T) {
	t.Parallel()
	var buf lockedBuffer
	h := New(&app.App{Log: slog.New(slog.NewJSONHandler(&buf, nil))})
	e := h.(*echo.Echo)
	e.GET("/test-gone", func(c echo.Context) error { return c.Request().Context().Err() })
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	rec := httptest.NewRecorder()
	e.ServeHTTP(rec, httptest.NewRequest("GET", "/test-gone", nil).WithContext(ctx))
	log := buf.String()
	if !strings.Contains(log, `"status":499`) || strings.Contains(log, `"level":"ERROR"`) {
		t.Errorf("log %q: want status 499 at info level", log)
	}
}
