package web

import (
	"bytes"
	"crypto/sha256"
	"io"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"
)

// Idempotency-Key on the JSON API's POST calls that create something (holds,
// checkout, pay): a client whose answer was lost (a commit acknowledged too late, a
// dropped connection) sends the same request with the same key and gets the first
// answer, status and body, instead of a second hold, order or charge. The key belongs
// to the session's buyer; the same key with another request (body or address) is a
// 422. Answers are kept for booking.Config.IdempotencyTTL.

const (
	idempotencyHeader = "Idempotency-Key"
	// replayedHeader marks a replayed answer, as Stripe does.
	replayedHeader = "Idempotent-Replayed"
	maxKeyLength   = 255
)

// errInvalidKey answers an Idempotency-Key that validKey refuses.
var errInvalidKey = badRequest("invalid_idempotency_key", "Idempotency-Key is 1 to 255 printable ASCII characters.")

// idempotent runs h once per Idempotency-Key, or just runs it when the request has
// none. Answers on our side's failures (5xx) and "ask again" answers (429, busy) are
// not kept: a repeat runs the request again.
func (s *server) idempotent(c echo.Context, h echo.HandlerFunc) error {
	key := c.Request().Header.Get(idempotencyHeader)
	if key == "" {
		return h(c)
	}
	if !validKey(key) {
		return errInvalidKey
	}
	buyer, err := s.buyer(c)
	if err != nil {
		return err
	}
	body, err := io.ReadAll(c.Request().Body)
	if err != nil {
		return jsonError(err) // the body limit
	}
	c.Request().Body = io.NopCloser(bytes.NewReader(body))
	ctx := c.Request().Context()
	first, err := s.Buyer.BeginIdempotent(ctx, buyer, key, requestHash(c.Request(), body))
	if err != nil {
		return err
	}
	if first != nil {
		c.Response().Header().Set(replayedHeader, "true")
		return c.Blob(first.Status, echo.MIMEApplicationJSON, first.Body)
	}

	rec := &recorder{ResponseWriter: c.Response().Writer}
	c.Response().Writer = rec
	herr := h(c)
	code := ""
	if herr != nil {
		// The one error handler writes the answer now, through the recorder, so that
		// what is kept is exactly what went out; Echo's own call of it then finds the
		// answer committed and only the request log sees the error.
		s.handleError(herr, c)
		code = s.toAPIError(herr).Code
	}
	c.Response().Writer = rec.ResponseWriter
	rec.send()
	status, answer := c.Response().Status, rec.body.Bytes()
	if !c.Response().Committed {
		status = 0
	}
	if !keepAnswer(status, code) {
		status = 0 // gives the key back
	}
	// The answer has gone out whole; the key's save follows it.
	s.Buyer.SaveIdempotentAfter(ctx, buyer, key, status, answer)
	return herr
}

// keepAnswer reports whether an answer is the request's final word, to replay; code is
// its error code, if it is an error.
func keepAnswer(status int, code string) bool {
	switch {
	case status == 0, status >= 500, status == http.StatusTooManyRequests, status == http.StatusRequestTimeout:
		return false
	case code == "busy":
		return false
	}
	return true
}

// requestHash names a request: its method, path and body.
func requestHash(r *http.Request, body []byte) []byte {
	h := sha256.New()
	io.WriteString(h, r.Method)   //nolint:errcheck // a hash does not fail
	h.Write([]byte{0})            //nolint:errcheck
	io.WriteString(h, r.URL.Path) //nolint:errcheck
	h.Write([]byte{0})            //nolint:errcheck
	h.Write(body)                 //nolint:errcheck
	return h.Sum(nil)
}

// validKey accepts printable ASCII, as the header's users (UUIDs, random tokens) send.
func validKey(k string) bool {
	if len(k) > maxKeyLength {
		return false
	}
	for i := 0; i < len(k); i++ {
		if k[i] < 0x21 || k[i] > 0x7e {
			return false
		}
	}
	return true
}

// recorder keeps an answer (its status and body) until send, which sends it with its
// length, so that the client has it whole while the key's save follows (the answers
// here are small JSON).
type recorder struct {
	http.ResponseWriter
	status int
	body   bytes.Buffer
}

func (r *recorder) WriteHeader(status int) {
	if r.status == 0 {
		r.status = status
	}
}

func (r *recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return r.body.Write(b)
}

// Flush holds the answer too: it goes out with send.
func (r *recorder) Flush() {}

// send writes the kept answer, if any, with its Content-Length, and flushes it.
func (r *recorder) send() {
	if r.status == 0 {
		return
	}
	if bodyAllowed(r.status) {
		r.ResponseWriter.Header().Set(echo.HeaderContentLength, strconv.Itoa(r.body.Len()))
	}
	r.ResponseWriter.WriteHeader(r.status)
	r.ResponseWriter.Write(r.body.Bytes()) //nolint:errcheck // a client gone away is no answer's fault
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// bodyAllowed reports whether an answer of status may carry a body (RFC 9110).
func bodyAllowed(status int) bool {
	return status >= 200 && status != http.StatusNoContent && status != http.StatusNotModified
}
