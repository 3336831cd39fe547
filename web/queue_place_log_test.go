package web_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"testing"
	"time"
)

// TestPlaceRequestsLoggedAtDebug: the crowd's place calls are logged at debug level
// when answered, so a server logging at info writes no line for them, while their
// refusals (a POST without its CSRF token) and the other routes' requests (the board,
// the negative control) are logged as before; a server logging at debug writes them.
func TestPlaceRequestsLoggedAtDebug(t *testing.T) {
	t.Parallel()
	for _, level := range []slog.Level{slog.LevelInfo, slog.LevelDebug} {
		t.Run(level.String(), func(t *testing.T) {
			t.Parallel()
			var buf lockedBuffer
			a := newTestApp(t, func(o *appOptions) {
				o.Log = slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: level}))
			})
			roomOn(t, a, a.EventID, 10, 50, time.Minute)
			arrival(t, a, a.EventID) // its GET and its POST, both answered 200
			c := visitorVia(t, a, a.EventID, nil)
			c.csrf = ""
			if st := c.do("POST", placePath(a.EventID), nil, nil); st != http.StatusForbidden {
				t.Fatalf("POST place without the CSRF token: got %d, want 403", st)
			}
			board := "/api/v1/events/" + itoa(a.EventID) + "/queue/board"
			if st := c.do("GET", board, nil, nil); st != http.StatusOK {
				t.Fatalf("GET board: got %d, want 200", st)
			}

			lines := map[string][]int{} // "METHOD uri" → statuses logged
			sc := bufio.NewScanner(bytes.NewReader(buf.Bytes()))
			for sc.Scan() {
				var l struct {
					Msg, Method, URI string
					Status           int
				}
				if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
					t.Fatalf("log line %q: %v", sc.Text(), err)
				}
				if l.Msg == "request" {
					lines[l.Method+" "+l.URI] = append(lines[l.Method+" "+l.URI], l.Status)
				}
			}
			answered := 3 // the arrival's GET and POST, the refused visitor's GET
			if level == slog.LevelInfo {
				answered = 0
			}
			place := placePath(a.EventID)
			if got := len(lines["GET "+place]) + count200(lines["POST "+place]); got != answered {
				t.Errorf("answered place calls logged: %d (%v), want %d", got, lines, answered)
			}
			if got := lines["POST "+place]; !contains(got, http.StatusForbidden) {
				t.Errorf("the refused place call: logged statuses %v, want its 403", got)
			}
			if got := lines["GET "+board]; len(got) != 1 {
				t.Errorf("the board: logged %v, want one line", got)
			}
		})
	}
}

func count200(statuses []int) int {
	n := 0
	for _, s := range statuses {
		if s == http.StatusOK {
			n++
		}
	}
	return n
}

func contains(statuses []int, want int) bool {
	for _, s := range statuses {
		if s == want {
			return true
		}
	}
	return false
}
