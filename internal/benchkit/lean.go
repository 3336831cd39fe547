package benchkit

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strconv"
	"syscall"
	"time"
)

// A lean HTTP/1.1 client, as load generators such as wrk and h2load are: one
// keep-alive connection per client, each request written in one write from bytes built
// once plus the few headers that vary, and each answer parsed for what a benchmark
// reads of it (the status, the body by Content-Length or chunks, the Set-Cookie
// pairs). Go's net/http client runs a reader and a writer goroutine per connection and
// builds header maps and cookies for every answer; on a machine shared with the server
// measured, that work is a large part of what a comparison of servers would measure.

// leanUserAgent is the User-Agent net/http's client sends, so that a server sees the
// same request from either client.
const leanUserAgent = "Go-http-client/1.1"

// leanMaxBody bounds an answer's body: a benchmark's answers are small, and a broken
// length must not make the client allocate without end.
const leanMaxBody = 16 << 20

// LeanRequest is a request's fixed part, built once: its request line, Host,
// User-Agent and fixed headers.
type LeanRequest struct {
	head     []byte
	withBody bool // POST, PUT, PATCH: a Content-Length is sent, 0 included
	noBody   bool // HEAD: the answer has no body whatever its headers say
}

// NewLeanRequest is method path on base (http://host:port) with the fixed headers
// given as name, value pairs.
func NewLeanRequest(method, base, path string, header ...string) (LeanRequest, error) {
	u, err := url.Parse(base)
	if err != nil || u.Scheme != "http" || u.Host == "" {
		return LeanRequest{}, fmt.Errorf("lean client: base %q is not http://host[:port]", base)
	}
	if len(header)%2 != 0 {
		return LeanRequest{}, errors.New("lean client: headers come in name, value pairs")
	}
	h := fmt.Appendf(nil, "%s %s HTTP/1.1\r\nHost: %s\r\nUser-Agent: %s\r\n", method, path, u.Host, leanUserAgent)
	for i := 0; i < len(header); i += 2 {
		h = fmt.Appendf(h, "%s: %s\r\n", header[i], header[i+1])
	}
	switch method {
	case "POST", "PUT", "PATCH":
		return LeanRequest{head: h, withBody: true}, nil
	case "HEAD":
		return LeanRequest{head: h, noBody: true}, nil
	}
	return LeanRequest{head: h}, nil
}

// LeanHeaders are the headers that vary from request to request; empty ones are not
// sent.
type LeanHeaders struct {
	Cookie       []byte
	CSRFToken    []byte
	ForwardedFor []byte
}

// LeanResponse is one answer; its buffers are reused from call to call.
type LeanResponse struct {
	Status int
	// Cookies are the answer's Set-Cookie name=value pairs in their order, joined by
	// "; " as a Cookie header carries them back.
	Cookies []byte
	Body    []byte
}

// LeanConn is one client's keep-alive connection to a server. It dials on first use
// and again after the server closes the connection. A LeanConn is for one goroutine.
type LeanConn struct {
	addr string
	// Timeout bounds each request, from its write to its answer's last byte.
	Timeout time.Duration
	conn    net.Conn
	br      *bufio.Reader
	wbuf    []byte
	// watched is the context whose end cuts the connection short, unwatch what
	// stops that: set once per connection and context, not per request.
	watched     context.Context
	watchedConn net.Conn
	unwatch     func() bool
}

// NewLeanConn is a connection to base (http://host:port), dialled on first use.
func NewLeanConn(base string) (*LeanConn, error) {
	u, err := url.Parse(base)
	if err != nil || u.Scheme != "http" || u.Host == "" {
		return nil, fmt.Errorf("lean client: base %q is not http://host[:port]", base)
	}
	addr := u.Host
	if u.Port() == "" {
		addr = net.JoinHostPort(u.Hostname(), "80")
	}
	return &LeanConn{addr: addr, Timeout: 30 * time.Second}, nil
}

// Close closes the connection, if open.
func (c *LeanConn) Close() error {
	if c.unwatch != nil {
		c.unwatch()
		c.unwatch, c.watched, c.watchedConn = nil, nil, nil
	}
	if c.conn == nil {
		return nil
	}
	err := c.conn.Close()
	c.conn = nil
	return err
}

// errStale is a kept-alive connection that the server closed before answering: the
// request goes again on a new connection, once.
var errStale = errors.New("lean client: connection closed before an answer")

// Do sends req with h and body and reads the answer into resp.
func (c *LeanConn) Do(ctx context.Context, req LeanRequest, h LeanHeaders, body []byte, resp *LeanResponse) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.build(req, h, body)
	for attempt := 0; ; attempt++ {
		reused := c.conn != nil
		if !reused {
			if err := c.dial(ctx); err != nil {
				return err
			}
		}
		err := c.roundTrip(ctx, req, resp)
		if err == nil {
			return nil
		}
		c.Close()
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if !reused || attempt > 0 || !errors.Is(err, errStale) {
			return err
		}
	}
}

func (c *LeanConn) dial(ctx context.Context) error {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", c.addr)
	if err != nil {
		return err
	}
	c.conn = conn
	if c.br == nil {
		c.br = bufio.NewReaderSize(conn, 8192)
	} else {
		c.br.Reset(conn)
	}
	return nil
}

// build writes the whole request into c.wbuf.
func (c *LeanConn) build(req LeanRequest, h LeanHeaders, body []byte) {
	b := append(c.wbuf[:0], req.head...)
	for _, v := range [...]struct {
		name  string
		value []byte
	}{{"Cookie: ", h.Cookie}, {"X-CSRF-Token: ", h.CSRFToken}, {"X-Forwarded-For: ", h.ForwardedFor}} {
		if len(v.value) > 0 {
			b = append(append(append(b, v.name...), v.value...), "\r\n"...)
		}
	}
	if req.withBody || len(body) > 0 {
		b = strconv.AppendInt(append(b, "Content-Length: "...), int64(len(body)), 10)
		b = append(b, "\r\n"...)
	}
	c.wbuf = append(append(b, "\r\n"...), body...)
}

// roundTrip writes c.wbuf and reads the answer; errStale says that nothing of an
// answer came back.
func (c *LeanConn) roundTrip(ctx context.Context, req LeanRequest, resp *LeanResponse) error {
	if err := c.conn.SetDeadline(time.Now().Add(c.Timeout)); err != nil {
		return err
	}
	c.watch(ctx)
	if err := ctx.Err(); err != nil { // ended before the deadline above was set
		return err
	}
	if _, err := c.conn.Write(c.wbuf); err != nil {
		if closedByPeer(err) {
			return fmt.Errorf("%w: %w", errStale, err)
		}
		return err
	}
	keep, err := readLeanResponse(c.br, req.noBody, resp)
	if err == nil && !keep {
		c.Close()
	}
	return err
}

// watch makes ctx's end cut the connection's I/O short, by a deadline in the past.
func (c *LeanConn) watch(ctx context.Context) {
	if ctx.Done() == nil || (ctx == c.watched && c.conn == c.watchedConn) {
		return
	}
	if c.unwatch != nil {
		c.unwatch()
	}
	conn := c.conn
	c.unwatch = context.AfterFunc(ctx, func() { _ = conn.SetDeadline(time.Unix(1, 0)) })
	c.watched, c.watchedConn = ctx, conn
}

// readLeanResponse reads one answer from br into resp, skipping interim (1xx) ones,
// and says whether the connection stays open after it.
func readLeanResponse(br *bufio.Reader, noBody bool, resp *LeanResponse) (keep bool, err error) {
	for first := true; ; first = false {
		line, err := br.ReadSlice('\n')
		if err != nil {
			if first && len(line) == 0 && closedByPeer(err) {
				return false, fmt.Errorf("%w: %w", errStale, err)
			}
			return false, fmt.Errorf("lean client: status line: %w", err)
		}
		line = trimCRLF(line)
		if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.")) || line[8] != ' ' {
			return false, fmt.Errorf("lean client: malformed status line %q", line)
		}
		status, err := strconv.Atoi(string(line[9:12]))
		if err != nil || status < 100 || (len(line) > 12 && line[12] != ' ') {
			return false, fmt.Errorf("lean client: malformed status line %q", line)
		}
		// Read before the header: line is br's buffer, which the next read may move.
		http11 := line[7] == '1'
		h, err := readLeanHeader(br, resp)
		if err != nil {
			return false, err
		}
		if status == 101 {
			return false, errors.New("lean client: unexpected 101 Switching Protocols")
		}
		if status < 200 {
			continue
		}
		resp.Status = status
		keep = http11 && !h.close
		resp.Body = resp.Body[:0]
		switch {
		case noBody || status == 204 || status == 304:
		case h.chunked:
			resp.Body, err = readChunked(br, resp.Body)
		case h.length >= 0:
			resp.Body, err = readN(br, resp.Body, h.length)
		default: // the body runs until the server closes the connection
			keep = false
			var buf bytes.Buffer
			_, err = buf.ReadFrom(io.LimitReader(br, leanMaxBody))
			resp.Body = append(resp.Body, buf.Bytes()...)
		}
		return keep && err == nil, err
	}
}

// leanHeader is what the client reads of an answer's header.
type leanHeader struct {
	length  int64 // -1: none given
	chunked bool
	close   bool
}

// readLeanHeader reads header lines up to the empty line; resp.Cookies gets the
// Set-Cookie pairs.
func readLeanHeader(br *bufio.Reader, resp *LeanResponse) (leanHeader, error) {
	h := leanHeader{length: -1}
	resp.Cookies = resp.Cookies[:0]
	for {
		line, err := br.ReadSlice('\n')
		if err != nil {
			return h, fmt.Errorf("lean client: header: %w", err)
		}
		line = trimCRLF(line)
		if len(line) == 0 {
			return h, nil
		}
		name, value, ok := bytes.Cut(line, []byte(":"))
		if !ok {
			return h, fmt.Errorf("lean client: malformed header line %q", line)
		}
		value = bytes.TrimSpace(value)
		switch {
		case bytes.EqualFold(name, []byte("Content-Length")):
			n, err := strconv.ParseInt(string(value), 10, 64)
			if err != nil || n < 0 || n > leanMaxBody {
				return h, fmt.Errorf("lean client: Content-Length %q", value)
			}
			h.length = n
		case bytes.EqualFold(name, []byte("Transfer-Encoding")):
			h.chunked = bytes.EqualFold(value, []byte("chunked"))
			if !h.chunked {
				return h, fmt.Errorf("lean client: Transfer-Encoding %q not supported", value)
			}
		case bytes.EqualFold(name, []byte("Connection")):
			h.close = h.close || bytes.Contains(bytes.ToLower(value), []byte("close"))
		case bytes.EqualFold(name, []byte("Set-Cookie")):
			pair, _, _ := bytes.Cut(value, []byte(";"))
			pair = bytes.TrimSpace(pair)
			if n := bytes.IndexByte(pair, '='); n < 1 {
				continue // no name: a cookie the client would drop
			}
			if len(resp.Cookies) > 0 {
				resp.Cookies = append(resp.Cookies, "; "...)
			}
			resp.Cookies = append(resp.Cookies, pair...)
		}
	}
}

// readChunked appends a chunked body to b, trailers read and dropped.
func readChunked(br *bufio.Reader, b []byte) ([]byte, error) {
	for {
		line, err := br.ReadSlice('\n')
		if err != nil {
			return b, fmt.Errorf("lean client: chunk size: %w", err)
		}
		size, _, _ := bytes.Cut(trimCRLF(line), []byte(";"))
		n, err := strconv.ParseInt(string(bytes.TrimSpace(size)), 16, 64)
		if err != nil || n < 0 || int64(len(b))+n > leanMaxBody {
			return b, fmt.Errorf("lean client: chunk size %q", line)
		}
		if n == 0 {
			for {
				line, err := br.ReadSlice('\n')
				if err != nil {
					return b, fmt.Errorf("lean client: trailer: %w", err)
				}
				if len(trimCRLF(line)) == 0 {
					return b, nil
				}
			}
		}
		if b, err = readN(br, b, n); err != nil {
			return b, err
		}
		if line, err := br.ReadSlice('\n'); err != nil || len(trimCRLF(line)) != 0 {
			return b, fmt.Errorf("lean client: no CRLF after a chunk (%v)", err)
		}
	}
}

// readN appends n bytes of br to b.
func readN(br *bufio.Reader, b []byte, n int64) ([]byte, error) {
	start := len(b)
	b = append(b, make([]byte, n)...)
	if _, err := io.ReadFull(br, b[start:]); err != nil {
		return b[:start], fmt.Errorf("lean client: body: %w", err)
	}
	return b, nil
}

func trimCRLF(line []byte) []byte {
	line = bytes.TrimSuffix(line, []byte("\n"))
	return bytes.TrimSuffix(line, []byte("\r"))
}

// closedByPeer is the end of a connection that the server closed, as it may a
// kept-alive one at any moment; a timeout is not.
func closedByPeer(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}
