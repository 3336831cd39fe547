package web

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"net/http"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"
)

// render writes a component as a whole page or fragment. Rendering into a buffer first
// means a template error is still an error answer, not half a page; the buffer also
// gives the ETag that lets the CDN and browsers revalidate for free.
func render(c echo.Context, status int, cacheControl string, comp templ.Component) error {
	var buf bytes.Buffer
	if err := comp.Render(c.Request().Context(), &buf); err != nil {
		return err
	}
	sum := sha256.Sum256(buf.Bytes())
	etag := `"` + hex.EncodeToString(sum[:8]) + `"`
	h := c.Response().Header()
	h.Set("Cache-Control", cacheControl)
	h.Set("ETag", etag)
	if status == http.StatusOK && c.Request().Header.Get("If-None-Match") == etag {
		return c.NoContent(http.StatusNotModified)
	}
	return c.HTMLBlob(status, buf.Bytes())
}
