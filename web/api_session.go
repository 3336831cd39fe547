package web

import (
	"net/http"

	"github.com/labstack/echo/v4"
)

type sessionJSON struct {
	CSRFToken string `json:"csrfToken"`
}

// getSession starts (or continues) a buyer session and hands out the CSRF token that
// every POST and DELETE must carry in X-CSRF-Token.
func (s *server) getSession(c echo.Context) error {
	if _, err := s.buyer(c); err != nil {
		return err
	}
	tok, _ := c.Get(csrfContext).(string)
	return c.JSON(http.StatusOK, sessionJSON{CSRFToken: tok})
}
