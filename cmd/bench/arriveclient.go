package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"boxoffice/internal/benchkit"
)

// The arrivals compare servers, so their clients must cost as little as they can on
// the machine they share with them: by default each client is a lean HTTP/1.1
// connection of its own (benchkit.LeanConn), as wrk's and h2load's are; -client
// nethttp measures with Go's net/http client instead, to set the two side by side.
const (
	clientLean    = "lean"
	clientNetHTTP = "nethttp"
)

// arriver makes one client's next arrival: the first GET if its kind has one, then
// the POST, whose status and answer it returns; the answer is valid until the next
// arrival.
type arriver func(ctx context.Context) (status int, answer []byte, err error)

// newArrivers makes n clients' arrivers of kind on event ev against base, with the
// client named, and what closes their connections.
func newArrivers(client, base string, ev arriveTarget, kind arrivalKind, n int) ([]arriver, func(), error) {
	first, join := kind.path(kind.first, ev.ID), kind.path(kind.post, ev.ID)
	if client == clientNetHTTP {
		out, closeAll := netHTTPArrivers(base, kind, first, join, n)
		return out, closeAll, nil
	}
	var get benchkit.LeanRequest
	if kind.first != "" {
		var err error
		if get, err = benchkit.NewLeanRequest(http.MethodGet, base, first); err != nil {
			return nil, nil, err
		}
	}
	postHeader := []string{"Content-Type", "application/json"}
	if kind.browser {
		postHeader = append(postHeader, "Sec-Fetch-Site", "same-origin")
	}
	post, err := benchkit.NewLeanRequest(http.MethodPost, base, join, postHeader...)
	if err != nil {
		return nil, nil, err
	}
	conns := make([]*benchkit.LeanConn, n)
	out := make([]arriver, n)
	for i := range n {
		c, err := benchkit.NewLeanConn(base)
		if err != nil {
			return nil, nil, err
		}
		conns[i] = c
		var got, answer benchkit.LeanResponse
		out[i] = func(ctx context.Context) (int, []byte, error) {
			if kind.first == "" {
				if err := c.Do(ctx, post, benchkit.LeanHeaders{}, nil, &answer); err != nil {
					return 0, nil, err
				}
				return answer.Status, answer.Body, nil
			}
			if err := c.Do(ctx, get, benchkit.LeanHeaders{}, nil, &got); err != nil {
				return 0, nil, err
			}
			if got.Status != http.StatusOK {
				return 0, nil, fmt.Errorf("GET %s: status %d", first, got.Status)
			}
			csrf := csrfTokenOf(got.Body)
			if len(csrf) == 0 {
				return 0, nil, fmt.Errorf("GET %s: no csrfToken", first)
			}
			if err := c.Do(ctx, post, benchkit.LeanHeaders{Cookie: got.Cookies, CSRFToken: csrf}, nil, &answer); err != nil {
				return 0, nil, err
			}
			return answer.Status, answer.Body, nil
		}
	}
	return out, func() {
		for _, c := range conns {
			c.Close()
		}
	}, nil
}

// netHTTPArrivers are n arrivers of kind on one net/http client with an idle
// connection for every one of them, and what closes its connections.
func netHTTPArrivers(base string, kind arrivalKind, first, join string, n int) ([]arriver, func()) {
	cl := newAPIClient(base, n)
	url, site := base+join, ""
	if kind.browser {
		site = "same-origin"
	}
	out := make([]arriver, n)
	for i := range n {
		var answer bytes.Buffer
		out[i] = func(ctx context.Context) (int, []byte, error) {
			answer.Reset()
			var b buyer
			if kind.first != "" {
				var err error
				if b, err = cl.firstGet(ctx, first); err != nil {
					return 0, nil, err
				}
			}
			b.fetchSite = site
			st, err := cl.post(ctx, url, b, nil, &answer)
			return st, answer.Bytes(), err
		}
	}
	return out, cl.Close
}

// The answers the arrivals read are flat JSON objects written by encoding/json or
// byte for byte alike (web's placeAnswer), so a field is found by its key's bytes: an
// unescaped `"key":` occurs in such an object only as that key. Anything else is
// decoded.

// csrfTokenOf is the csrfToken of a first GET's answer, nil if none.
func csrfTokenOf(body []byte) []byte {
	if v, ok := scanString(body, "csrfToken"); ok {
		return v
	}
	var a struct {
		CSRFToken string `json:"csrfToken"`
	}
	if json.Unmarshal(body, &a) != nil {
		return nil
	}
	return []byte(a.CSRFToken)
}

// scanString finds the first string value of key in a JSON body by a byte scan, the
// cheap way a benchmark client reads its answers: false when the key is not there as
// a string, or its value has an escape (the caller decodes the body then).
func scanString(body []byte, key string) ([]byte, bool) {
	_, rest, ok := bytes.Cut(body, []byte(`"`+key+`":"`))
	if !ok {
		return nil, false
	}
	v, _, ok := bytes.Cut(rest, []byte(`"`))
	return v, ok && bytes.IndexByte(v, '\\') < 0
}

// inPreQueue says whether a join's answer puts the visitor in the pre-queue, where
// every arrival an hour before the onsale belongs.
func inPreQueue(answer []byte) bool {
	if _, rest, ok := bytes.Cut(answer, []byte(`"preQueue":`)); ok {
		if bytes.HasPrefix(rest, []byte("true")) || bytes.HasPrefix(rest, []byte("false")) {
			return rest[0] == 't'
		}
	}
	var a struct {
		PreQueue bool `json:"preQueue"`
	}
	return json.Unmarshal(answer, &a) == nil && a.PreQueue
}
