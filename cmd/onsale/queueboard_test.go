package main

import (
	"testing"
	"time"
)

// TestFromBoardAddsTheNotice: between its looks a page's wait is the wait of the
// places ahead and its own, as the board gives it, and the board's notice (how long
// after its turn the page learns of it); with everything held there is none.
func TestFromBoardAddsTheNotice(t *testing.T) {
	t.Parallel()
	place := 150.0
	st := queueJSON{Number: 100, Position: 60, Place: &place}
	looked := time.Now().Add(-time.Second)
	bd := &queueBoardSeen{queueBoardJSON: queueBoardJSON{Served: 50, Head: 90, SecondsPerPlace: 0.1, SecondsPerPlaceMin: 0.08, NoticeSeconds: 1.5}, at: time.Now()}
	if eta, _, ok := fromBoard(st, looked, bd); !ok || eta != 7 { // 50 places × 0.1 s + 1.5 s
		t.Errorf("50 places at 0.1 s and a notice of 1.5 s: got %d s (ok %v), want 7", eta, ok)
	}
	held := *bd
	held.AllHeld = true
	if eta, _, ok := fromBoard(st, looked, &held); !ok || eta != 0 {
		t.Errorf("everything held: got %d s (ok %v), want none", eta, ok)
	}
}
