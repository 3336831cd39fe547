package web

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand"
	"net/http"
	"net/http/httptest"
	"reflect"
	"testing"
	"testing/quick"
	"time"

	"github.com/labstack/echo/v4"
)

// TestPlaceAnswerIsEncodingJSON: the place calls' answer is byte for byte what
// encoding/json writes, over random answers whose every field is set or left zero
// (so a field added to placeJSON and not to appendPlaceJSON fails here), over floats
// in both of encoding/json's forms, and over strings that need escaping. A float JSON
// cannot carry falls back to c.JSON's error.
func TestPlaceAnswerIsEncodingJSON(t *testing.T) {
	t.Parallel()
	rnd := rand.New(rand.NewSource(1))
	same := func(p placeJSON) bool {
		want, err := json.Marshal(p)
		got, gerr := appendPlaceJSON(nil, p)
		if err != nil || gerr != nil || !bytes.Equal(got, want) {
			t.Logf("%+v:\n got %s (%v)\nwant %s (%v)", p, got, gerr, want, err)
			return false
		}
		return true
	}
	if err := quick.Check(same, &quick.Config{MaxCount: 2000, Rand: rnd, Values: func(v []reflect.Value, r *rand.Rand) {
		v[0] = reflect.ValueOf(randomPlaceJSON(r))
	}}); err != nil {
		t.Error(err)
	}
	for _, f := range []float64{0, 1e-7, 1.5e-9, 0.000001, 0.5, 1e20, 1e21, 123456789e15, math.SmallestNonzeroFloat64, math.MaxFloat64, -2.5e-8} {
		tb := f
		if !same(placeJSON{Tiebreak: f, queueJSON: queueJSON{Place: &tb}}) {
			t.Errorf("float %g written otherwise than encoding/json writes it", f)
		}
	}
	for _, s := range []string{"a<b", "a>b", "a&b", "a<b>&c", `quote " and \ back`, "tab\t", "é", "\u2028", "bad \xff utf-8", "AZaz09-_."} {
		if !same(placeJSON{Epoch: s, CSRFToken: s, queueJSON: queueJSON{Token: s}}) {
			t.Errorf("string %q written otherwise than encoding/json writes it", s)
		}
	}

	// Through Echo: the same bytes, content type and status as c.JSON, newline included.
	e := echo.New()
	p := randomPlaceJSON(rnd)
	viaJSON, viaAnswer := httptest.NewRecorder(), httptest.NewRecorder()
	if err := e.NewContext(httptest.NewRequest("GET", "/", nil), viaJSON).JSON(http.StatusOK, p); err != nil {
		t.Fatal(err)
	}
	if err := placeAnswer(e.NewContext(httptest.NewRequest("GET", "/", nil), viaAnswer), p); err != nil {
		t.Fatal(err)
	}
	if viaAnswer.Code != viaJSON.Code || viaAnswer.Body.String() != viaJSON.Body.String() ||
		viaAnswer.Header().Get("Content-Type") != viaJSON.Header().Get("Content-Type") {
		t.Errorf("placeAnswer: %d %q %q; c.JSON: %d %q %q", viaAnswer.Code, viaAnswer.Header().Get("Content-Type"), viaAnswer.Body,
			viaJSON.Code, viaJSON.Header().Get("Content-Type"), viaJSON.Body)
	}
	nan := placeJSON{Tiebreak: math.NaN()}
	if _, err := appendPlaceJSON(nil, nan); err == nil {
		t.Error("appendPlaceJSON of a NaN tiebreak: no error, want one (encoding/json refuses it)")
	}
	if err := placeAnswer(e.NewContext(httptest.NewRequest("GET", "/", nil), httptest.NewRecorder()), nan); err == nil {
		t.Error("placeAnswer of a NaN tiebreak: no error, want encoding/json's")
	}
}

// randomPlaceJSON sets each field of a placeJSON, at random, to zero or to a random
// value of its type (reflection: every field, whatever is added later).
func randomPlaceJSON(r *rand.Rand) placeJSON {
	var p placeJSON
	fill(reflect.ValueOf(&p).Elem(), r)
	return p
}

func fill(v reflect.Value, r *rand.Rand) {
	if v.Kind() == reflect.Struct && v.Type() != reflect.TypeOf(time.Time{}) {
		for i := range v.NumField() {
			fill(v.Field(i), r)
		}
		return
	}
	if r.Intn(3) == 0 {
		return // zero: the omitempty fields left out
	}
	switch v.Kind() {
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(v.Elem(), r)
	case reflect.Float64:
		v.SetFloat(r.Float64() * math.Pow(10, float64(r.Intn(60)-30)))
	case reflect.String:
		any, _ := quick.Value(v.Type(), r) // random runes, beyond ASCII too
		v.SetString([]string{"tok3n-_AZ", "x<y&z", any.String()}[r.Intn(3)])
	case reflect.Struct: // time.Time
		v.Set(reflect.ValueOf(time.UnixMilli(r.Int63n(4e12)).UTC()))
	default:
		if x, ok := quick.Value(v.Type(), r); ok {
			v.Set(x)
		}
	}
}
