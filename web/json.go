package web

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"boxoffice/internal/booking"
)

// decodeJSON reads exactly one JSON object into v from the body: the right content
// type, no unknown fields, nothing after it. Every failure is a 4xx with a message a
// person can act on.
func decodeJSON(c echo.Context, v any) error {
	mt, _, err := mime.ParseMediaType(c.Request().Header.Get(echo.HeaderContentType))
	if err != nil || mt != echo.MIMEApplicationJSON {
		return &apiError{Status: http.StatusUnsupportedMediaType, Code: "unsupported_media_type",
			Message: "Send the body as application/json."}
	}
	dec := json.NewDecoder(c.Request().Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return jsonError(err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return badRequest("invalid_json", "The body must hold one JSON object and nothing after it.")
	}
	return nil
}

func jsonError(err error) error {
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	var he *echo.HTTPError
	switch {
	case errors.As(err, &he):
		return he // the body limit
	case errors.Is(err, io.EOF):
		return badRequest("empty_body", "The body is empty; send a JSON object.")
	case errors.As(err, &syntax), errors.Is(err, io.ErrUnexpectedEOF):
		return badRequest("invalid_json", "The body is not valid JSON.")
	case errors.As(err, &typ):
		if typ.Field == "" {
			return badRequest("invalid_json", "The body must be a JSON object.")
		}
		return badRequest("invalid_json", fmt.Sprintf("Field %q has the wrong type or is out of range.", typ.Field))
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		return badRequest("unknown_field", fmt.Sprintf("Unknown field %s.", strings.TrimPrefix(err.Error(), "json: unknown field ")))
	}
	return badRequest("invalid_json", "The body is not valid JSON.")
}

// pathID reads a positive id from the path.
func pathID(c echo.Context, name string) (int64, error) {
	id, err := booking.ParseID(c.Param(name))
	if err != nil {
		return 0, badRequest("invalid_id", fmt.Sprintf("%s must be a positive whole number.", name))
	}
	return id, nil
}

// cleanText rejects text that PostgreSQL could not store or a person could not mean.
func cleanText(field, s string, max int) error {
	if len(s) > max {
		return badRequest("invalid_"+field, fmt.Sprintf("%s is longer than %d characters.", field, max))
	}
	if strings.ContainsRune(s, 0) || !utf8.ValidString(s) {
		return badRequest("invalid_"+field, fmt.Sprintf("%s contains characters that are not allowed.", field))
	}
	return nil
}
