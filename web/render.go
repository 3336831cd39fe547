package web

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strings"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"
)

// render writes a component as a whole page or fragment. Rendering into a buffer first
// means a template error is still an error answer, not half a page; the buffer also
// gives the ETag that lets the CDN and browsers revalidate for free. The ETag is weak:
// the same page goes out gzipped or plain, and a strong tag would promise the same
// bytes.
func render(c echo.Context, status int, cacheControl string, comp templ.Component) error {
	var buf bytes.Buffer
	// Into memory, so the request's deadline has nothing to cut short; and the error
	// handler renders after the deadline middleware has cancelled the request's
	// context, when the answer must go out all the more.
	if err := comp.Render(context.WithoutCancel(c.Request().Context()), &buf); err != nil {
		return err
	}
	sum := sha256.Sum256(buf.Bytes())
	etag := `W/"` + hex.EncodeToString(sum[:8]) + `"`
	h := c.Response().Header()
	h.Set("Cache-Control", cacheControl)
	h.Set("ETag", etag)
	if status == http.StatusOK && etagMatches(c.Request().Header.Get("If-None-Match"), etag) {
		return c.NoContent(http.StatusNotModified)
	}
	return c.HTMLBlob(status, buf.Bytes())
}

// etagMatches is If-None-Match's weak comparison: any listed tag, weak or strong, with
// the same opaque value; or "*".
func etagMatches(ifNoneMatch, etag string) bool {
	want := strings.TrimPrefix(etag, "W/")
	for tag := range strings.SplitSeq(ifNoneMatch, ",") {
		tag = strings.TrimSpace(tag)
		if tag == "*" || strings.TrimPrefix(tag, "W/") == want {
			return true
		}
	}
	return false
}
