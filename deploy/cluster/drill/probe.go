package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"time"

	"boxoffice/internal/benchkit"
)

// idemState is what idem-hold hands to idem-retry: the session, the key, the request
// and the first answer.
type idemState struct {
	Addr    string         `json:"addr"`
	CSRF    string         `json:"csrf"`
	Cookies []*http.Cookie `json:"cookies"`
	Key     string         `json:"key"`
	Path    string         `json:"path"`
	Body    map[string]any `json:"body"`
	Status  int            `json:"status"`
	Answer  string         `json:"answer"`
}

func runIdemHold(ctx context.Context, args []string, env benchkit.Env) error {
	fs := benchkit.FlagSet("drill", "idem-hold", env)
	base := fs.String("url", "", "the instance to hold on")
	event := fs.Int64("event", 0, "an event on sale without a waiting room")
	state := fs.String("state", "", "file for the session, key and answer")
	if err := fs.Parse(args); err != nil {
		return err
	}
	b := newBuyer(*base)
	if err := b.session(ctx); err != nil {
		return err
	}
	s := idemState{Addr: b.addr, CSRF: b.csrf, Key: "drill-" + strconv.FormatInt(time.Now().UnixNano(), 36),
		Path: fmt.Sprintf("/api/v1/events/%d/holds", *event), Body: map[string]any{"quantity": 1}}
	st, body, err := b.call(ctx, http.MethodPost, s.Path, s.Body, map[string]string{"Idempotency-Key": s.Key})
	if err != nil {
		return err
	}
	s.Status, s.Answer, s.Cookies = st, string(body), b.cookies()
	fmt.Fprintf(env.Stdout, "idem-hold on %s: %d %s\n", *base, st, bytes.TrimSpace(body))
	j, err := json.Marshal(s)
	if err != nil {
		return err
	}
	if err := os.WriteFile(*state, j, 0o600); err != nil {
		return err
	}
	if st != http.StatusCreated {
		return errFailed
	}
	return nil
}

func runIdemRetry(ctx context.Context, args []string, env benchkit.Env) error {
	fs := benchkit.FlagSet("drill", "idem-retry", env)
	base := fs.String("url", "", "where the retry goes (another instance, or the balancer)")
	state := fs.String("state", "", "idem-hold's file")
	if err := fs.Parse(args); err != nil {
		return err
	}
	j, err := os.ReadFile(*state)
	if err != nil {
		return err
	}
	var s idemState
	if err := json.Unmarshal(j, &s); err != nil {
		return err
	}
	b := newBuyer(*base)
	b.addr, b.csrf = s.Addr, s.CSRF
	b.rebase(*base, s.Cookies)
	st, body, err := b.call(ctx, http.MethodPost, s.Path, s.Body, map[string]string{"Idempotency-Key": s.Key})
	if err != nil {
		return err
	}
	same := st == s.Status && bytes.Equal(bytes.TrimSpace(body), bytes.TrimSpace([]byte(s.Answer)))
	fmt.Fprintf(env.Stdout, "idem-retry on %s: %d %s; the first answer: %v\n", *base, st, bytes.TrimSpace(body), same)
	// The negative control: the same key with another body must be refused (422), so
	// the retry above was matched by its key and body, not answered afresh.
	other := map[string]any{"quantity": 2}
	st2, body2, err := b.call(ctx, http.MethodPost, s.Path, other, map[string]string{"Idempotency-Key": s.Key})
	if err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "idem-retry, same key, another body: %d %s\n", st2, bytes.TrimSpace(body2))
	if !same || st2 != http.StatusUnprocessableEntity {
		return errFailed
	}
	return nil
}

func runFirstHold(ctx context.Context, args []string, env benchkit.Env) error {
	fs := benchkit.FlagSet("drill", "first-hold", env)
	base := fs.String("url", "", "the balancer")
	event := fs.Int64("event", 0, "an event on sale without a waiting room")
	since := fs.Int64("since", 0, "the moment to measure from, Unix nanoseconds (0: now)")
	limit := fs.Duration("timeout", 2*time.Minute, "how long to keep trying")
	if err := fs.Parse(args); err != nil {
		return err
	}
	from := time.Now()
	if *since > 0 {
		from = time.Unix(0, *since)
	}
	ctx, cancel := context.WithTimeout(ctx, *limit)
	defer cancel()
	tries, last := 0, ""
	for ctx.Err() == nil {
		tries++
		b := newBuyer(*base)
		if err := b.session(ctx); err != nil {
			last = err.Error()
		} else {
			st, body, err := b.call(ctx, http.MethodPost, fmt.Sprintf("/api/v1/events/%d/holds", *event), map[string]any{"quantity": 1}, nil)
			switch {
			case err != nil:
				last = err.Error()
			case st == http.StatusCreated:
				fmt.Fprintf(env.Stdout, "first-hold: a hold made %.1f s after the start, at try %d (last failure: %s)\n",
					time.Since(from).Seconds(), tries, orNone(last))
				return nil
			default:
				last = fmt.Sprintf("%d %s", st, bytes.TrimSpace(body))
			}
		}
		benchkit.Sleep(ctx, 200*time.Millisecond)
	}
	fmt.Fprintf(env.Stdout, "first-hold: no hold in %s (%d tries; last failure: %s)\n", *limit, tries, orNone(last))
	return errFailed
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	if len(s) > 200 {
		s = s[:200]
	}
	return s
}
