package web

import (
	"encoding/json"
	"math"
	"net/http"
	"strconv"
	"sync"

	"github.com/labstack/echo/v4"
)

// The place calls answer every arrival of an onsale's crowd, and encoding/json's
// reflection over the answer's two dozen fields was the largest part of the handlers'
// own time. placeAnswer writes the same bytes as c.JSON (encoding/json, a newline
// after) by appending each field in turn; a test holds the two equal over random
// answers, every field included.

// placeBuffers keeps the answers' buffers for reuse.
var placeBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

// placeAnswer writes out as c.JSON(http.StatusOK, out) does.
func placeAnswer(c echo.Context, out placeJSON) error {
	bp := placeBuffers.Get().(*[]byte)
	defer placeBuffers.Put(bp)
	b, err := appendPlaceJSON((*bp)[:0], out)
	if err != nil {
		return c.JSON(http.StatusOK, out) // a value the fast path does not write: encoding/json says why
	}
	*bp = append(b, '\n')
	return c.Blob(http.StatusOK, echo.MIMEApplicationJSON, *bp)
}

// appendPlaceJSON appends json.Marshal(p) to b; it fails, without an answer, on a
// float that JSON cannot carry (NaN, ±Inf).
func appendPlaceJSON(b []byte, p placeJSON) ([]byte, error) {
	q := p.queueJSON
	b = appendBool(append(b, `{"admitted":`...), q.Admitted)
	b = strconv.AppendInt(append(b, `,"position":`...), int64(q.Position), 10)
	b = strconv.AppendInt(append(b, `,"etaSeconds":`...), int64(q.EtaSeconds), 10)
	if q.Token != "" {
		b = appendJSONString(append(b, `,"token":`...), q.Token)
	}
	if q.ExpiresAt != nil {
		t, err := q.ExpiresAt.MarshalJSON()
		if err != nil {
			return b, err
		}
		b = append(append(b, `,"expiresAt":`...), t...)
	}
	b = strconv.AppendInt(append(b, `,"ahead":`...), int64(q.Ahead), 10)
	b = strconv.AppendInt(append(b, `,"waiting":`...), int64(q.Waiting), 10)
	b = strconv.AppendInt(append(b, `,"etaMinSeconds":`...), int64(q.EtaMinSeconds), 10)
	b = strconv.AppendInt(append(b, `,"etaMaxSeconds":`...), int64(q.EtaMaxSeconds), 10)
	b = strconv.AppendInt(append(b, `,"seatsLeft":`...), int64(q.SeatsLeft), 10)
	b = appendBool(append(b, `,"soldOut":`...), q.SoldOut)
	b = appendBool(append(b, `,"preQueue":`...), q.PreQueue)
	b = appendBool(append(b, `,"allHeld":`...), q.AllHeld)
	b = appendBool(append(b, `,"likelyGone":`...), q.LikelyGone)
	b = strconv.AppendInt(append(b, `,"pollAfterSeconds":`...), int64(q.PollAfterSeconds), 10)
	b = strconv.AppendInt(append(b, `,"lookAfterSeconds":`...), int64(q.LookAfterSeconds), 10)
	if q.Number != 0 {
		b = strconv.AppendInt(append(b, `,"number":`...), q.Number, 10)
	}
	var ok bool
	if q.Place != nil {
		if b, ok = appendJSONFloat(append(b, `,"place":`...), *q.Place); !ok {
			return b, errNotJSONFloat
		}
	}
	b = appendBool(append(b, `,"placed":`...), p.Placed)
	b = strconv.AppendUint(append(b, `,"group":`...), p.Group, 10)
	if b, ok = appendJSONFloat(append(b, `,"tiebreak":`...), p.Tiebreak); !ok {
		return b, errNotJSONFloat
	}
	if p.Epoch != "" {
		b = appendJSONString(append(b, `,"epoch":`...), p.Epoch)
	}
	b = appendBool(append(b, `,"turn":`...), p.Turn)
	if p.CSRFToken != "" {
		b = appendJSONString(append(b, `,"csrfToken":`...), p.CSRFToken)
	}
	if p.Board != "" {
		b = appendJSONString(append(b, `,"board":`...), p.Board)
	}
	if p.Presale {
		b = append(b, `,"presale":true`...)
	}
	return append(b, '}'), nil
}

// errNotJSONFloat is a float that JSON cannot carry.
var errNotJSONFloat = &json.UnsupportedValueError{Str: "NaN or ±Inf"}

func appendBool(b []byte, v bool) []byte {
	if v {
		return append(b, "true"...)
	}
	return append(b, "false"...)
}

// appendJSONFloat appends f as encoding/json writes a float64: the shortest decimal
// that reads back the same, in exponent form below 1e-6 and from 1e21 on.
func appendJSONFloat(b []byte, f float64) ([]byte, bool) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return b, false
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' { // e-09 → e-9, as encoding/json writes it
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b, true
}

// appendJSONString appends s quoted as encoding/json quotes it. The place calls'
// strings are tokens of URL-safe characters, written as they are; anything else goes
// through encoding/json.
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s) // a string always marshals
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}
