package web_test

import (
	"boxoffice/internal/apptest"
	"context"
	"log/slog"
	"net/http/httptest"
	"testing"

	"github.com/labstack/echo/v4"
)

// TestClientGoneIsNot500: a handler that fails because its client hung up is logged
// as 499 at info level, not as a server error.
func TestClientGoneIsNot500(t *testing.T) {
	t.Parallel()
	var buf lockedBuffer
	p := apptest.New(t, apptest.Options{Log: slog.New(slog.NewJSONHandler(&buf, nil))})
	e := p.Handler.(*echo.Echo)
	e.GET("/test-gone", func(c echo.Context) error { return c.Request().Context().Err() })
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	rec := httptest.NewRecorder()
	e.ServeHTTP(rec, httptest.NewRequest("GET", "/test-gone", nil).WithContext(ctx))
	if line := requestLine(t, &buf, "/test-gone"); line.Status != 499 || line.Level != "INFO" {
		t.Errorf("got log line %+v, want status 499 at level INFO", line)
	}
}
