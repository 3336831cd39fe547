package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptrace"
	"strconv"
	"time"
)

// client is one buyer's browser: its own cookie jar (so its own session) and CSRF
// token, over the transport every buyer shares (so connections are pooled and
// bounded, as a crowd behind one NAT would not be, but as one machine must be).
type client struct {
	http *http.Client
	base string
	csrf string
	// proof, if set, goes with the next call in X-Altcha: a solved challenge (prove).
	proof string
	// addr is the buyer's own address, sent in X-Forwarded-For as the CDN edge in
	// front sends a client's: the server's limits per address see each buyer apart,
	// not the one machine the crowd runs on. Empty: none sent.
	addr string
	// key, if set, goes with the next call as its Idempotency-Key (send).
	key string
}

func newClient(base string, rt http.RoundTripper, timeout time.Duration) *client {
	jar, _ := cookiejar.New(nil) // New never fails without options
	return &client{http: &http.Client{Jar: jar, Transport: rt, Timeout: timeout}, base: base}
}

// buyerAddr is buyer id's address: 10.0.0.1 and on, one each.
func buyerAddr(id int) string {
	return fmt.Sprintf("10.%d.%d.%d", id>>16&0xff, id>>8&0xff, id&0xff)
}

// apiErr is the JSON error body of every 4xx and 5xx.
type apiErr struct {
	Code               string  `json:"error"`
	Message            string  `json:"message"`
	ConflictingSeatIDs []int64 `json:"conflictingSeatIds"`
	Position           *int    `json:"position"`
	// LimitedBy names the limit that refused a 429 rate_limited (address_holds, …).
	LimitedBy string `json:"limitedBy"`
	// Lapsed: a 429 not_admitted to a buyer whose turn lapsed, no seat held in time.
	Lapsed bool `json:"lapsed"`
}

// answer is what a call got: the status, the error body of a failure, and how long the
// server asked the caller to wait (Retry-After), if it did.
type answer struct {
	Status     int
	Err        apiErr
	RetryAfter time.Duration
	Took       time.Duration
	// ConnWait is the part of Took spent waiting for one of the simulator's own
	// connections (its pools are bounded; people's browsers do not share them).
	ConnWait time.Duration
	// Replayed: the server answered a repeated Idempotency-Key with its first answer.
	Replayed bool
}

// kind names the answer for the error table: the code of an error body, or the status.
func (a answer) kind() string {
	if a.Err.LimitedBy != "" {
		return strconv.Itoa(a.Status) + " " + a.Err.Code + " " + a.Err.LimitedBy
	}
	if a.Err.Code != "" {
		return strconv.Itoa(a.Status) + " " + a.Err.Code
	}
	return strconv.Itoa(a.Status)
}

// errTransport wraps what never reached an answer: a refused connection, a timeout.
var errTransport = errors.New("transport")

// errKind names a call's failure for the error table: a timeout, no answer at all (with
// what the connection said, so that a run's rare failures can be told apart), or an
// answer that could not be read.
func errKind(err error) string {
	var ne net.Error
	var oe *net.OpError
	switch {
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return "timeout"
	case !errors.Is(err, errTransport):
		return "bad answer"
	case errors.As(err, &oe) && oe.Err != nil:
		return "no answer (" + oe.Err.Error() + ")"
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "no answer (the connection closed)"
	}
	return "no answer"
}

// do sends one call with the session's cookies and CSRF token. body, if not nil, is
// sent as JSON; out, if not nil, receives a 2xx answer (decoded, or as it came into a
// *[]byte). An error means no answer came.
func (c *client) do(ctx context.Context, method, path string, body, out any) (answer, error) {
	key := c.key
	c.key = ""
	var r io.Reader
	if body != nil {
		j, err := json.Marshal(body)
		if err != nil {
			return answer{}, err
		}
		r = bytes.NewReader(j)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, r)
	if err != nil {
		return answer{}, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.csrf != "" {
		req.Header.Set("X-CSRF-Token", c.csrf)
	}
	if c.proof != "" {
		req.Header.Set("X-Altcha", c.proof)
		c.proof = ""
	}
	if c.addr != "" {
		req.Header.Set("X-Forwarded-For", c.addr)
	}
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	start := time.Now()
	var gotConn time.Time
	req = req.WithContext(httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		GotConn: func(httptrace.GotConnInfo) { gotConn = time.Now() },
	}))
	resp, err := c.http.Do(req)
	if err != nil {
		return answer{Took: time.Since(start)}, fmt.Errorf("%w: %s %s: %w", errTransport, method, path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	a := answer{Status: resp.StatusCode, Took: time.Since(start), ConnWait: gotConn.Sub(start),
		Replayed: resp.Header.Get("Idempotent-Replayed") == "true"}
	if err != nil {
		return a, fmt.Errorf("%w: %s %s: reading the answer: %w", errTransport, method, path, err)
	}
	if s := resp.Header.Get("Retry-After"); s != "" {
		if n, err := strconv.Atoi(s); err == nil {
			a.RetryAfter = time.Duration(n) * time.Second
		}
	}
	if resp.StatusCode >= 300 {
		if len(raw) > 0 && json.Unmarshal(raw, &a.Err) != nil {
			a.Err.Code = "not_json"
		}
		return a, nil
	}
	if p, ok := out.(*[]byte); ok { // the caller reads the answer itself
		*p = raw
		return a, nil
	}
	if out != nil && len(raw) > 0 {
		if err := json.Unmarshal(raw, out); err != nil {
			return a, fmt.Errorf("%s %s: answer %d is not the JSON expected: %w", method, path, resp.StatusCode, err)
		}
	}
	return a, nil
}

// The JSON API's answers, as far as the simulator reads them.
type (
	eventJSON struct {
		ID          int64     `json:"id"`
		Slug        string    `json:"slug"`
		Name        string    `json:"name"`
		OnsaleAt    time.Time `json:"onsaleAt"`
		WaitingRoom bool      `json:"waitingRoom"`
	}
	queueJSON struct {
		Admitted   bool `json:"admitted"`
		Position   int  `json:"position"`
		EtaSeconds int  `json:"etaSeconds"`
		Ahead      int  `json:"ahead"`
		Waiting    int  `json:"waiting"`
		SeatsLeft  int  `json:"seatsLeft"`
		SoldOut    bool `json:"soldOut"`
		PreQueue   bool `json:"preQueue"`
		AllHeld    bool `json:"allHeld"`
		// LikelyGone: more are ahead than the unsold places are likely to serve; the
		// page shows that instead of a wait.
		LikelyGone bool `json:"likelyGone"`
		// PollAfter is the pace the server sets for the page's next refresh, in seconds;
		// LookAfter when it must look itself again at the latest (0: at every refresh).
		PollAfter int `json:"pollAfterSeconds"`
		LookAfter int `json:"lookAfterSeconds"`
		// Number and Place: where the waiter stands in the line, for the board.
		Number int64    `json:"number"`
		Place  *float64 `json:"place"`
	}
	seatJSON struct {
		ID      int64  `json:"id"`
		Section string `json:"section"`
		Row     string `json:"row"`
		Number  int    `json:"number"`
		Status  string `json:"status"`
	}
	gaTierJSON struct {
		ID        int64 `json:"id"`
		Remaining int   `json:"remaining"`
	}
	statusesJSON struct {
		Layout   string       `json:"layout"`
		Statuses string       `json:"statuses"`
		GATiers  []gaTierJSON `json:"gaTiers"`
	}
	layoutJSON struct {
		Layout string     `json:"layout"`
		Seats  []seatJSON `json:"seats"`
	}
	holdJSON struct {
		HoldID   string     `json:"holdId"`
		Seats    []seatJSON `json:"seats"`
		GAPlaces *struct {
			Quantity int `json:"quantity"`
		} `json:"gaPlaces"`
	}
	checkoutJSON struct {
		OrderID     int64 `json:"orderId"`
		AmountCents int64 `json:"amountCents"`
	}
	payJSON struct {
		Status string `json:"status"`
	}
	orderJSON struct {
		OrderID     int64      `json:"orderId"`
		Status      string     `json:"status"`
		AmountCents int64      `json:"amountCents"`
		Seats       []seatJSON `json:"seats"`
		GAPlaces    *struct {
			Quantity int `json:"quantity"`
		} `json:"gaPlaces"`
		Tickets []struct {
			ID       int64 `json:"id"`
			SeatID   int64 `json:"seatId"`
			GATierID int64 `json:"gaTierId"`
		} `json:"tickets"`
		Refunds []struct {
			Status string `json:"status"`
		} `json:"refunds"`
	}
)
