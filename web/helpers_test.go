package web_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"boxoffice/internal/booking"
	"boxoffice/internal/demo"
	"boxoffice/web"
)

// errorBody is an error answer as a client reads it. It is not apiError on purpose: a
// renamed JSON tag must fail these tests, not change them silently.
type errorBody struct {
	Error              string  `json:"error"`
	Message            string  `json:"message"`
	ConflictingSeatIDs []int64 `json:"conflictingSeatIds"`
	UnknownSeatIDs     []int64 `json:"unknownSeatIds"`
	Limit              int     `json:"limit"`
}

// parseError reads an error answer and says what is wrong with it, if anything: it
// must be JSON with a code and a message.
func parseError(raw []byte) (errorBody, error) {
	var e errorBody
	if err := json.Unmarshal(raw, &e); err != nil {
		return e, fmt.Errorf("error answer is not JSON: %q", truncate(raw))
	}
	if e.Error == "" || e.Message == "" {
		return e, fmt.Errorf("error answer %q lacks an error code or a message", truncate(raw))
	}
	return e, nil
}

func truncate(b []byte) string {
	if len(b) > 300 {
		return string(b[:300]) + "…"
	}
	return string(b)
}

// send is raw for any goroutine: it returns a failure instead of stopping the test.
// body is sent as is when it is a string, []byte or io.Reader (a reader of unknown
// length goes chunked) and JSON-encoded otherwise.
func (c *client) send(ctx context.Context, method, path string, body any, header http.Header) (int, []byte, http.Header, error) {
	var r io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		r = strings.NewReader(b)
	case []byte:
		r = bytes.NewReader(b)
	case io.Reader:
		r = b
	default:
		j, err := json.Marshal(b)
		if err != nil {
			return 0, nil, nil, err
		}
		r = bytes.NewReader(j)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, r)
	if err != nil {
		return 0, nil, nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.csrf != "" {
		req.Header.Set(web.CSRFHeader, c.csrf)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, nil, nil, fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return resp.StatusCode, nil, resp.Header, fmt.Errorf("%s %s: reading answer: %w", method, path, err)
	}
	return resp.StatusCode, raw, resp.Header, nil
}

// hold holds exactly these seats, or stops the test.
func (c *client) hold(eventID int64, seats ...int64) web.HoldJSON {
	c.t.Helper()
	var h web.HoldJSON
	if st := c.do("POST", "/api/v1/events/"+itoa(eventID)+"/holds", map[string]any{"seatIds": seats}, &h); st != http.StatusCreated {
		c.t.Fatalf("hold %v: got status %d, want 201", seats, st)
	}
	return h
}

// checkout checks a hold out, or stops the test.
func (c *client) checkout(holdID string) web.CheckoutAnswerJSON {
	c.t.Helper()
	var co web.CheckoutAnswerJSON
	if st := c.do("POST", "/api/v1/holds/"+holdID+"/checkout", map[string]string{"email": "ada@example.com"}, &co); st != http.StatusCreated {
		c.t.Fatalf("checkout %s: got status %d, want 201", holdID, st)
	}
	return co
}

// pay pays an order with the card that succeeds, delivered as asked, or stops the test.
func (c *client) pay(orderID int64, delivery string) {
	c.t.Helper()
	body := map[string]string{"card": "4242 4242 4242 4242", "delivery": delivery}
	if st := c.do("POST", "/api/v1/orders/"+itoa(orderID)+"/pay", body, nil); st != http.StatusAccepted {
		c.t.Fatalf("pay order %d (%q): got status %d, want 202", orderID, delivery, st)
	}
}

// firstSeats returns the event's first n seat ids.
func firstSeats(t testing.TB, pool *pgxpool.Pool, eventID int64, n int) []int64 {
	t.Helper()
	rows, err := pool.Query(context.Background(), `SELECT id FROM seats WHERE event_id = $1 ORDER BY id LIMIT $2`, eventID, n)
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil || len(ids) != n {
		t.Fatalf("first %d seats of event %d: got %d (%v)", n, eventID, len(ids), err)
	}
	return ids
}

// count runs a query that returns one number.
func count(t testing.TB, pool *pgxpool.Pool, query string, args ...any) int {
	t.Helper()
	var n int
	if err := pool.QueryRow(context.Background(), query, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}

// seatFree reports whether a seat is available to anyone, by the database's clock.
func seatFree(t testing.TB, pool *pgxpool.Pool, eventID, seatID int64) bool {
	t.Helper()
	return count(t, pool, `SELECT count(*) FROM seats WHERE event_id = $1 AND id = $2
		AND sold_at IS NULL AND (held_by IS NULL OR hold_expires_at <= now())`, eventID, seatID) == 1
}

// lapse makes a hold expire now, as test setup: the seat rows decide, the hold row agrees.
func lapse(t testing.TB, pool *pgxpool.Pool, holdID string) {
	t.Helper()
	id, err := booking.ParseHoldID(holdID)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := pool.Exec(ctx, `UPDATE seats SET hold_expires_at = now() - interval '1 second'
		WHERE event_id = $1 AND held_by = $2`, id.Event, id.Seq); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `UPDATE holds SET expires_at = now() - interval '1 second'
		WHERE event_id = $1 AND id = $2`, id.Event, id.Seq); err != nil {
		t.Fatal(err)
	}
}

// smallEvent creates a second, small event (10 seats, 10 standing places) next to the
// demo event.
func smallEvent(t testing.TB, pool *pgxpool.Pool, slug string) int64 {
	t.Helper()
	now := time.Now()
	id, err := demo.Create(context.Background(), pool, demo.EventSpec{
		Slug: slug, Name: "Small " + slug, Venue: "Small Hall", City: "Berlin",
		StartsAt: now.Add(48 * time.Hour).Truncate(time.Hour), OnsaleAt: now.Add(-time.Hour).Truncate(time.Hour),
		Sections: []demo.Section{{Name: "Stalls", Rows: 2, SeatsPerRow: 5, Prices: []demo.RowPrice{{FromRow: 0, Tier: "A", PriceCents: 1000}}}},
		GA:       []demo.GATier{{Name: "Standing", PriceCents: 500, Capacity: 10, Stripes: 1}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// stateTables are what a sale can change, each with the order its rows are hashed in.
var stateTables = []struct{ name, order string }{
	{"seats", "event_id, id"},
	{"holds", "event_id, id"},
	{"hold_ga_places", "event_id, hold_id, tier_id, stripe"},
	{"ga_stripes", "event_id, tier_id, stripe"},
	{"orders", "id"},
	{"tickets", "event_id, id"},
	{"payment_events", "provider, event_id"},
}

// saleState fingerprints every row a sale can change, in every event of the database:
// per table a row count and a hash of the rows' text. Sessions are left out: they are
// no part of a sale.
func saleState(t testing.TB, pool *pgxpool.Pool) map[string]string {
	t.Helper()
	var parts []string
	for _, tb := range stateTables {
		parts = append(parts, fmt.Sprintf(
			`SELECT '%[1]s', count(*) || ' rows, md5 ' || md5(coalesce(string_agg(t::text, ';' ORDER BY %[2]s), '')) FROM %[1]s t`,
			tb.name, tb.order))
	}
	rows, err := pool.Query(context.Background(), strings.Join(parts, " UNION ALL "))
	if err != nil {
		t.Fatalf("sale state: %v", err)
	}
	out := map[string]string{}
	for rows.Next() {
		var name, fp string
		if err := rows.Scan(&name, &fp); err != nil {
			t.Fatal(err)
		}
		out[name] = fp
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("sale state: %v", err)
	}
	return out
}

// stateDiff names the tables whose fingerprint changed.
func stateDiff(before, after map[string]string) []string {
	var changed []string
	for _, name := range slices.Sorted(maps.Keys(before)) {
		if before[name] != after[name] {
			changed = append(changed, fmt.Sprintf("%s: %s -> %s", name, before[name], after[name]))
		}
	}
	return changed
}
