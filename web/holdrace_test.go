package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"boxoffice/internal/booking"
	"boxoffice/internal/booking/bookingtest"
	"boxoffice/web"
)

// holdAnswer is one hold attempt of the race as the buyer saw it.
type holdAnswer struct {
	buyer  int
	asked  []int64
	status int
	hold   web.HoldJSON
	err    errorBody
	fail   error // transport failure or unreadable answer
}

// TestHoldRace has 100 buyers make 2,000 hold attempts over HTTP, all at once, on the
// same 100 seats. Every seat must end up held exactly once: the 201 answers (each the
// buyer's whole basket) put each of the 100 seats in one hold only, the seat rows agree
// hold for hold, every other answer is a 409
// that says why, and nothing else (no 5xx, no transport error) happens.
func TestHoldRace(t *testing.T) {
	t.Parallel()
	const buyers, attempts = 100, 20
	app := newTestApp(t, noRateLimit) // 20 attempts a session, all at once
	seats := firstSeats(t, app.Pool, app.EventID, 100)
	tr := &http.Transport{MaxIdleConns: 2 * buyers, MaxIdleConnsPerHost: 2 * buyers, IdleConnTimeout: time.Minute}
	t.Cleanup(tr.CloseIdleConnections)
	clients := make([]*client, buyers)
	for i := range clients {
		clients[i] = app.newClientVia(t, tr, 30*time.Second)
	}
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)

	path := "/api/v1/events/" + itoa(app.EventID) + "/holds"
	answers := make([][]holdAnswer, buyers)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i, c := range clients {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(seed, uint64(i)))
			<-start
			for n := range attempts {
				// The first attempt asks for the buyer's own seat alone: taken or not,
				// afterwards it is held by someone, so all 100 seats end up held.
				asked := []int64{seats[i]}
				if n > 0 {
					asked = pick(rng, seats, 1+rng.IntN(3))
				}
				ans := holdAnswer{buyer: i, asked: asked}
				st, raw, _, err := c.send(context.Background(), "POST", path, map[string]any{"seatIds": asked}, nil)
				ans.status, ans.fail = st, err
				if err == nil && st == http.StatusCreated {
					ans.fail = json.Unmarshal(raw, &ans.hold)
				} else if err == nil {
					ans.err, ans.fail = parseError(raw)
				}
				answers[i] = append(answers[i], ans)
			}
		})
	}
	began := time.Now()
	close(start)
	wg.Wait()
	all := slices.Concat(answers...)
	t.Logf("%d hold attempts by %d buyers in %v", len(all), buyers, time.Since(began))

	for _, p := range checkHoldRace(t, app.Pool, app.EventID, seats, all) {
		t.Error(p)
	}
	// Negative control: a second 201 for a seat that is held already is a double hold,
	// and the check must say so.
	for _, a := range all {
		if a.status == http.StatusCreated {
			forged := a
			forged.buyer = (a.buyer + 1) % buyers
			forged.hold.HoldID = fmt.Sprintf("%d-%d", app.EventID, 1<<40)
			if len(checkHoldRace(t, app.Pool, app.EventID, seats, append(all, forged))) == 0 {
				t.Errorf("negative control: a forged second hold of seats %v went unnoticed", a.asked)
			}
			break
		}
	}
	bookingtest.Check(t, app.Pool, app.EventID)
}

// pick returns n distinct seats chosen at random.
func pick(rng *rand.Rand, seats []int64, n int) []int64 {
	out := make([]int64, 0, n)
	for _, k := range rng.Perm(len(seats))[:n] {
		out = append(out, seats[k])
	}
	return out
}

// checkHoldRace returns what is wrong with the race's answers and the seat rows.
func checkHoldRace(t *testing.T, pool *pgxpool.Pool, eventID int64, seats []int64, answers []holdAnswer) []string {
	t.Helper()
	var problems []string
	// A buyer's hold calls join their basket: a 201 answers the whole hold, which has
	// the seats asked for and those of the buyer's earlier calls. A seat in the answers
	// of two different holds is a double hold.
	held := map[int64]string{} // seat -> hold id, from the 201 answers
	holdOf := map[string]int{} // hold id -> buyer
	perBuyer := map[int]map[int64]bool{}
	created, conflicts, limits := 0, 0, 0
	for _, a := range answers {
		switch {
		case a.fail != nil:
			problems = append(problems, fmt.Sprintf("buyer %d, seats %v: status %d: %v", a.buyer, a.asked, a.status, a.fail))
		case a.status == http.StatusCreated:
			created++
			got := make([]int64, len(a.hold.Seats))
			for i, s := range a.hold.Seats {
				got[i] = s.ID
			}
			if !subset(a.asked, got) {
				problems = append(problems, fmt.Sprintf("buyer %d asked for %v, got hold %s of %v", a.buyer, a.asked, a.hold.HoldID, got))
			}
			if b, ok := holdOf[a.hold.HoldID]; ok && b != a.buyer {
				problems = append(problems, fmt.Sprintf("hold %s answered to buyers %d and %d", a.hold.HoldID, b, a.buyer))
			}
			holdOf[a.hold.HoldID] = a.buyer
			if perBuyer[a.buyer] == nil {
				perBuyer[a.buyer] = map[int64]bool{}
			}
			for _, id := range got {
				if h, ok := held[id]; ok && h != a.hold.HoldID {
					problems = append(problems, fmt.Sprintf("seat %d held twice: holds %s and %s", id, h, a.hold.HoldID))
				}
				held[id] = a.hold.HoldID
				perBuyer[a.buyer][id] = true
			}
		case a.status == http.StatusConflict && a.err.Error == "seat_unavailable":
			conflicts++
			if len(a.err.ConflictingSeatIDs) == 0 || !subset(a.err.ConflictingSeatIDs, a.asked) {
				problems = append(problems, fmt.Sprintf("buyer %d asked for %v, told %v are taken", a.buyer, a.asked, a.err.ConflictingSeatIDs))
			}
		case a.status == http.StatusConflict && a.err.Error == "limit_exceeded":
			limits++
			if a.err.Limit != 10 {
				problems = append(problems, fmt.Sprintf("buyer %d: limit_exceeded says limit %d, want 10", a.buyer, a.err.Limit))
			}
		default:
			problems = append(problems, fmt.Sprintf("buyer %d, seats %v: got %d %q (%s), want 201 or 409", a.buyer, a.asked, a.status, a.err.Error, a.err.Message))
		}
	}
	t.Logf("%d held, %d seat_unavailable, %d limit_exceeded", created, conflicts, limits)
	if len(held) != len(seats) {
		problems = append(problems, fmt.Sprintf("201 answers hold %d distinct seats, want %d", len(held), len(seats)))
	}
	for b, seats := range perBuyer {
		if len(seats) > 10 {
			problems = append(problems, fmt.Sprintf("buyer %d holds %d seats, more than the limit of 10", b, len(seats)))
		}
	}

	// The seat rows are the authority: each must be held by the hold that was told so.
	rows, err := pool.Query(context.Background(), `SELECT id, held_by FROM seats
		WHERE event_id = $1 AND id = ANY($2) AND sold_at IS NULL AND held_by IS NOT NULL AND hold_expires_at > now()`,
		eventID, seats)
	if err != nil {
		t.Fatal(err)
	}
	inDB := map[int64]string{}
	for rows.Next() {
		var id, by int64
		if err := rows.Scan(&id, &by); err != nil {
			t.Fatal(err)
		}
		inDB[id] = booking.HoldID{Event: eventID, Seq: by}.String()
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if len(inDB) != len(seats) {
		problems = append(problems, fmt.Sprintf("database: %d of the %d seats held, want all", len(inDB), len(seats)))
	}
	for id, h := range held {
		if inDB[id] != h {
			problems = append(problems, fmt.Sprintf("seat %d: answered held by %s, database says %q", id, h, inDB[id]))
		}
	}
	if n := count(t, pool, `SELECT count(*) FROM holds WHERE event_id = $1`, eventID); n != len(holdOf) {
		problems = append(problems, fmt.Sprintf("database: %d holds, want one per hold answered: %d", n, len(holdOf)))
	}
	if n := count(t, pool, `SELECT count(*) FROM (SELECT buyer FROM holds WHERE event_id = $1
		GROUP BY buyer HAVING sum(seat_count) > 10) x`, eventID); n > 0 {
		problems = append(problems, fmt.Sprintf("database: %d buyers hold more than 10 seats", n))
	}
	return problems
}

func sameSet(a, b []int64) bool {
	return len(a) == len(b) && subset(a, b)
}

func subset(a, b []int64) bool {
	for _, x := range a {
		if !slices.Contains(b, x) {
			return false
		}
	}
	return true
}
