// Package mailtest reads what reached the test mail catcher: the mailpit that
// `make test` starts (.ci/services.sh), named by MAILPIT_URL (its web page and JSON
// API) and MAILPIT_SMTP_URL (where to send). Tests share it, so each test sends to
// addresses of its own (Address) and reads only those.
//
// It imports only the standard library.
package mailtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"testing"
	"time"
)

// Catcher is the test mail catcher.
type Catcher struct {
	// URL is mailpit's web page and API, e.g. http://127.0.0.1:58025.
	URL string
	// SMTPURL is where to send, as SMTP_URL takes it, e.g. smtp://127.0.0.1:51025.
	SMTPURL string
	client  *http.Client
}

// New returns the catcher `make test` started. It fails the test, saying how to start
// one, if MAILPIT_URL and MAILPIT_SMTP_URL are not set or mailpit does not answer.
func New(t testing.TB) *Catcher {
	t.Helper()
	c := &Catcher{URL: os.Getenv("MAILPIT_URL"), SMTPURL: os.Getenv("MAILPIT_SMTP_URL"),
		client: &http.Client{Timeout: 10 * time.Second}}
	if c.URL == "" || c.SMTPURL == "" {
		t.Fatal("mailtest: MAILPIT_URL and MAILPIT_SMTP_URL are not set: run tests through `make test`, " +
			"or first eval \"$(.ci/services.sh)\", which starts mailpit (built once into .data/bin)")
	}
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, c.URL+"/livez", nil)
	res, err := c.client.Do(req)
	if err != nil {
		t.Fatalf("mailtest: mailpit at MAILPIT_URL=%s does not answer (%v): start it with .ci/services.sh", c.URL, err)
	}
	res.Body.Close()
	return c
}

// Address returns a recipient address that no other test uses, so that a test counts
// only its own email in the shared catcher.
func Address(t testing.TB) string {
	t.Helper()
	b := make([]byte, 6)
	_, _ = rand.Read(b) // never fails
	return "buyer-" + hex.EncodeToString(b) + "@boxoffice.test"
}

// Summary is one email in a listing.
type Summary struct {
	ID          string // mailpit's id, for Message
	MessageID   string
	Subject     string
	Attachments int
	To          []struct{ Address string }
}

// Message is one email in full.
type Message struct {
	ID        string
	MessageID string
	Subject   string
	From      struct{ Name, Address string }
	To        []struct{ Address string }
	Text      string
	HTML      string
	// Inline are the parts shown within the HTML (the tickets' QR codes).
	Inline []struct {
		PartID      string
		FileName    string
		ContentType string
		ContentID   string
		Size        int
	}
}

// To lists the email that reached addr, newest first (mailpit's search, its
// /api/v1/messages filtered by recipient).
func (c *Catcher) To(ctx context.Context, addr string) ([]Summary, error) {
	var page struct {
		Total    int
		Messages []Summary
	}
	q := url.Values{"query": {fmt.Sprintf("to:%q", addr)}, "limit": {"100"}}
	if err := c.get(ctx, "/api/v1/search?"+q.Encode(), &page); err != nil {
		return nil, err
	}
	return page.Messages, nil
}

// Message reads one email in full.
func (c *Catcher) Message(ctx context.Context, id string) (Message, error) {
	var m Message
	err := c.get(ctx, "/api/v1/message/"+url.PathEscape(id), &m)
	return m, err
}

// Part reads one part of an email (an inline image) as mailpit stores it.
func (c *Catcher) Part(ctx context.Context, id, partID string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.URL+"/api/v1/message/"+url.PathEscape(id)+"/part/"+url.PathEscape(partID), nil)
	if err != nil {
		return nil, err
	}
	res, err := c.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("mailpit: part %s of %s: %s", partID, id, res.Status)
	}
	return io.ReadAll(res.Body)
}

// Wait waits until at least n emails reached addr and returns them; it fails the test
// when they have not after 30 seconds. Mailpit has no notification API this side of a
// websocket, so it asks again every 50 ms.
func (c *Catcher) Wait(t testing.TB, addr string, n int) []Summary {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		got, err := c.To(ctx, addr)
		if err == nil && len(got) >= n {
			return got
		}
		select {
		case <-ctx.Done():
			t.Fatalf("mailtest: %d email(s) to %s after 30s (last error %v), want %d", len(got), addr, err, n)
		case <-tick.C:
		}
	}
}

func (c *Catcher) get(ctx context.Context, path string, into any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.URL+path, nil)
	if err != nil {
		return err
	}
	res, err := c.client.Do(req)
	if err != nil {
		return fmt.Errorf("mailpit: %w", err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("mailpit: GET %s: %s", path, res.Status)
	}
	return json.NewDecoder(res.Body).Decode(into)
}
