package web

import (
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"
)

// TestErrorPages: a failure on our side shows the request id and never its cause, as a
// page, a fragment for htmx, or JSON under the API (TestUnknownPage: an unknown page is
// a page). The error handler reads nothing of the server but its logger.
func TestErrorPages(t *testing.T) {
	t.Parallel()
	s := &server{Deps: Deps{Log: slog.New(slog.NewTextHandler(io.Discard, nil))}}
	e := echo.New()
	for _, tc := range []struct {
		path  string
		htmx  bool
		ctype string
	}{
		{"/orders/1", false, "text/html"},
		{"/orders/1", true, "text/html"},
		{"/api/v1/orders/1", false, "application/json"},
	} {
		req := httptest.NewRequest("GET", tc.path, nil)
		if tc.htmx {
			req.Header.Set("HX-Request", "true")
		}
		rec := httptest.NewRecorder()
		c := e.NewContext(req, rec)
		c.Response().Header().Set(echo.HeaderXRequestID, "req-4711")
		s.handleError(errors.New("pq: secret cause at db.go:42"), c)
		body := rec.Body.String()
		if rec.Code != http.StatusInternalServerError || !strings.HasPrefix(rec.Header().Get("Content-Type"), tc.ctype) {
			t.Errorf("%s (htmx %v): got %d %s, want 500 %s", tc.path, tc.htmx, rec.Code, rec.Header().Get("Content-Type"), tc.ctype)
		}
		if !strings.Contains(body, "Something went wrong on our side") || strings.Contains(body, "secret cause") {
			t.Errorf("%s (htmx %v): got %q, want the human message and not the cause", tc.path, tc.htmx, body)
		}
		if tc.ctype == "text/html" {
			if !strings.Contains(body, "req-4711") {
				t.Errorf("%s (htmx %v): the request id is not shown", tc.path, tc.htmx)
			}
			if got := strings.Contains(body, "<html"); got != !tc.htmx {
				t.Errorf("%s (htmx %v): whole page is %v, want %v", tc.path, tc.htmx, got, !tc.htmx)
			}
		}
	}
}
