package web

import (
	"testing"

	"boxoffice/internal/waitroom"
)

// TestPlaceViewPreQueueIsThePlaces: a place answer says pre-queue (drawn at random)
// only for a place issued before the draw; one issued just after it, read against a
// board still cached from before the draw, is queued after the draw and says so.
func TestPlaceViewPreQueueIsThePlaces(t *testing.T) {
	before := waitroom.Board{PreQueue: true, PreCount: 100}
	for _, tc := range []struct {
		group uint64
		board waitroom.Board
		want  bool
	}{
		{0, before, true},
		{1, before, false},
		{0, waitroom.Board{CursorGroup: 0, CursorFrac: 0.1, PreCount: 100}, false},
	} {
		got := placeView(waitroom.Place{Group: tc.group, Tiebreak: 0.5, Number: 3}, tc.board, true)
		if got.PreQueue != tc.want {
			t.Errorf("group %d, board pre-queue %v: got preQueue %v, want %v", tc.group, tc.board.PreQueue, got.PreQueue, tc.want)
		}
	}
}
