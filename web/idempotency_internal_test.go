package web

import (
	"boxoffice/internal/booking"
	"net/http"
	"testing"
)

// TestKeepAnswer: final answers are kept for replay; our failures and "ask again"
// answers are not, whether they come as an apiError or as the domain's error (a busy
// best-available search is booking.ErrContended until the error handler words it).
func TestKeepAnswer(t *testing.T) {
	t.Parallel()
	s := &server{}
	for _, tc := range []struct {
		name   string
		status int
		err    error
		want   bool
	}{
		{"created", http.StatusCreated, nil, true},
		{"seat taken", http.StatusConflict, &booking.SeatsUnavailableError{SeatIDs: []int64{1}}, true},
		{"busy, from booking", http.StatusConflict, booking.ErrContended, false},
		{"unavailable", http.StatusServiceUnavailable, booking.ErrUnavailable, false},
		{"rate limited", http.StatusTooManyRequests, nil, false},
		{"not written", 0, nil, false},
	} {
		code := ""
		if tc.err != nil {
			code = s.toAPIError(tc.err).Code
		}
		if got := keepAnswer(tc.status, code); got != tc.want {
			t.Errorf("%s: got keep %v, want %v", tc.name, got, tc.want)
		}
	}
}
