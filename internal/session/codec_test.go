package session

import (
	"fmt"
	"maps"
	"testing"
	"time"

	"github.com/alexedwards/scs/v2"
)

// TestCodec: the remembering codec reads what scs's gob codec wrote and writes what it
// reads, and a caller changing the values it got (as scs's Put does) changes nothing
// the next request decodes.
func TestCodec(t *testing.T) {
	t.Parallel()
	deadline := time.Now().Add(time.Hour).Round(0)
	values := map[string]any{"buyer": "b-1", "visits": 1200, "staff": int64(3)}
	b, err := scs.GobCodec{}.Encode(deadline, values)
	if err != nil {
		t.Fatal(err)
	}
	c := NewCodec()
	for i := range 3 {
		gotDeadline, got, err := c.Decode(b)
		if err != nil {
			t.Fatalf("decode %d: %v", i, err)
		}
		if !gotDeadline.Equal(deadline) || !maps.Equal(got, values) {
			t.Fatalf("decode %d: got %v %v, want %v %v", i, gotDeadline, got, deadline, values)
		}
		got["buyer"], got["admission:7"] = "someone else", "token" // what scs's Put does to its copy
	}
	own, err := c.Encode(deadline, values)
	if err != nil {
		t.Fatal(err)
	}
	_, back, err := scs.GobCodec{}.Decode(own)
	if err != nil || !maps.Equal(back, values) {
		t.Errorf("gob decoding what the codec wrote: got %v, %v; want %v", back, err, values)
	}
	if _, _, err := c.Decode([]byte("not gob")); err == nil {
		t.Error("decoding garbage: got no error")
	}
}

// TestCodecRemembersWhatItEncoded: what the codec wrote it reads back without gob,
// and what it reads is what gob would have read (the same values of the same types,
// the same deadline), the caller's changes to its copy aside.
func TestCodecRemembersWhatItEncoded(t *testing.T) {
	t.Parallel()
	deadline := time.Now().Add(time.Hour)
	values := map[string]any{"buyer": "b-1", "visits": 1200, "staff": int64(3)}
	c := NewCodec()
	b, err := c.Encode(deadline, values)
	if err != nil {
		t.Fatal(err)
	}
	values["buyer"] = "changed after the write" // the caller's map is not what is kept
	c.mu.Lock()
	_, kept := c.memo[string(b)]
	c.mu.Unlock()
	if !kept {
		t.Fatal("the encoded session is not remembered: its next read decodes it with gob")
	}
	gobDeadline, gobValues, err := scs.GobCodec{}.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		gotDeadline, got, err := c.Decode(b)
		if err != nil {
			t.Fatal(err)
		}
		if !gotDeadline.Equal(gobDeadline) || !maps.Equal(got, gobValues) {
			t.Fatalf("read %d: got %v %v, gob reads %v %v", i, gotDeadline, got, gobDeadline, gobValues)
		}
		got["buyer"] = "someone else"
	}
}

// TestCodecRemembersAsManyAsTheStore: the memo keeps the decodings of as many sessions
// as the store keeps in memory; the first of them is still remembered when the last
// comes in.
func TestCodecRemembersAsManyAsTheStore(t *testing.T) {
	t.Parallel()
	c := NewCodec()
	deadline := time.Now().Add(time.Hour)
	for i := range maxCached {
		c.remember(fmt.Appendf(nil, "session %d", i), decoded{deadline: deadline, values: map[string]any{"buyer": i}})
	}
	c.mu.Lock()
	_, kept := c.memo["session 0"]
	n := len(c.memo)
	c.mu.Unlock()
	if !kept || n != maxCached {
		t.Errorf("after %d sessions: the first remembered %v, %d remembered; want true, %d", maxCached, kept, n, maxCached)
	}
}
