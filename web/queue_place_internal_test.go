package web

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"boxoffice/internal/waitroom"
)

// TestPlaceView: the place's figures from the board: its position and wait, the "may
// be gone" odds instead of a wait when more are ahead than the unsold places serve,
// its turn once the cursor passed it, and the pre-queue's share of the draw.
func TestPlaceView(t *testing.T) {
	t.Parallel()
	board := waitroom.Board{CursorGroup: 3, CursorFrac: 0.5, Passed: 100, Counted: 400, PreCount: 80, LastsFor: -1,
		PerPlaceMin: 100 * time.Millisecond, PerPlace: 200 * time.Millisecond, PerPlaceMax: 400 * time.Millisecond, SeatsLeft: 50}
	gone := board
	gone.LastsFor = 30
	for _, tc := range []struct {
		name      string
		place     waitroom.Place
		b         waitroom.Board
		turn      bool
		position  int
		eta, gone bool
	}{
		{"behind", waitroom.Place{Group: 9, Tiebreak: 0.2, Number: 140}, board, false, 41, true, false},
		{"may be gone", waitroom.Place{Group: 9, Tiebreak: 0.2, Number: 140}, gone, false, 41, false, true},
		{"within the odds", waitroom.Place{Group: 9, Tiebreak: 0.2, Number: 120}, gone, false, 21, true, false},
		{"passed, earlier group", waitroom.Place{Group: 2, Tiebreak: 0.9, Number: 90}, board, true, 0, false, false},
		{"passed, same group", waitroom.Place{Group: 3, Tiebreak: 0.4}, board, true, 0, false, false},
		{"not passed, same group", waitroom.Place{Group: 3, Tiebreak: 0.6, Number: 100}, board, false, 1, true, false},
		{"pre-queue", waitroom.Place{Group: 0, Tiebreak: 0.75}, waitroom.Board{CursorGroup: 0, CursorFrac: 0.25, PreCount: 80, LastsFor: -1}, false, 41, false, false},
	} {
		v := placeView(tc.place, tc.b, true)
		if v.Turn != tc.turn || v.Position != tc.position || (v.EtaSeconds > 0) != tc.eta || v.LikelyGone != tc.gone {
			t.Errorf("%s: got turn %v, position %d, eta %d s, likely gone %v; want %v, %d, eta %v, %v",
				tc.name, v.Turn, v.Position, v.EtaSeconds, v.LikelyGone, tc.turn, tc.position, tc.eta, tc.gone)
		}
	}
}

// TestPlaceCookieAsHTTPCookie: the place cookie's header, written in one string, is the
// one http.Cookie writes for its attributes, with COOKIE_SECURE and without.
func TestPlaceCookieAsHTTPCookie(t *testing.T) {
	t.Parallel()
	e := echo.New()
	for _, secure := range []bool{false, true} {
		rec := httptest.NewRecorder()
		s := &server{Deps: Deps{Settings: Settings{CookieSecure: secure}}}
		s.keepPlace(e.NewContext(httptest.NewRequest("POST", "/", nil), rec), 42, "AbC-_09")
		want := (&http.Cookie{Name: placeCookieName(42), Value: "AbC-_09", Path: "/", MaxAge: placeMaxAge,
			HttpOnly: true, Secure: secure, SameSite: http.SameSiteLaxMode}).String()
		if got := rec.Header().Values("Set-Cookie"); len(got) != 1 || got[0] != want {
			t.Errorf("secure %v: Set-Cookie %q, want %q", secure, got, want)
		}
	}
}
