package dbtest

import (
	"bytes"
	"errors"
	"net"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// Proxy is a TCP proxy between the code under test and a server, for failure tests:
// Down makes the server look gone (open connections break, new ones are refused), Up
// brings it back. It models a server that crashed or restarted, not a network that
// silently drops packets: clients see a closed connection at once, never a hang.
type Proxy struct {
	target string
	ln     net.Listener
	wg     sync.WaitGroup // the accept loop and every connection's goroutines

	mu     sync.Mutex
	down   bool
	closed bool
	conns  map[net.Conn]struct{} // both sides of every open proxied connection
	cut    *cut                  // armed by LoseAnswer or LoseMessage

	slow atomic.Int64 // Slow's delay of each answer, in nanoseconds
}

// cut is one armed cut: the connection that first sends text is cut.
type cut struct {
	text    []byte
	forward bool          // the message reaches the server; its answer does not come back
	done    chan struct{} // closed once the cut is made
}

// NewProxy starts a proxy on 127.0.0.1 with a free port that forwards to target
// (host:port). It is up from the start and is closed, with every connection through
// it, when the test ends.
func NewProxy(t testing.TB, target string) *Proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("dbtest: proxy listen: %v", err)
	}
	p := &Proxy{target: target, ln: ln, conns: make(map[net.Conn]struct{})}
	p.wg.Add(1)
	go p.serve()
	t.Cleanup(p.close)
	return p
}

// Addr is the host:port clients connect to instead of the target.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Down closes every connection through the proxy and makes it close new ones as soon
// as it accepts them, until Up. When Down returns, the client side of every open
// connection has been closed.
func (p *Proxy) Down() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = true
	p.closeAllLocked()
}

// Up lets new connections through again. Connections broken by Down stay broken.
func (p *Proxy) Up() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = false
}

// Slow makes every answer from the server wait d before it is passed on (0: none), on
// open connections and new ones: a server that answers, late, as one whose machine's
// cores are all busy does.
func (p *Proxy) Slow(d time.Duration) { p.slow.Store(int64(d)) }

// LoseAnswer arms the proxy to cut the next connection whose client sends a message
// containing text (a statement, "commit" say): the message reaches the server, and
// the connection is cut as soon as the server answers, the answer unsent. It is a
// connection lost after the server acted and before its client heard: a COMMIT whose
// outcome the client cannot know. The returned channel is closed once the cut is
// made. The text is looked for in each read of the client's bytes, so it must be
// short enough to arrive in one (a statement sent on its own does).
func (p *Proxy) LoseAnswer(text string) <-chan struct{} {
	return p.arm(text, true)
}

// LoseMessage is LoseAnswer with the message itself lost: the connection is cut before
// the server gets it, so the server ends the session without acting on it (a
// transaction waiting for its COMMIT is rolled back).
func (p *Proxy) LoseMessage(text string) <-chan struct{} {
	return p.arm(text, false)
}

func (p *Proxy) arm(text string, forward bool) <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = &cut{text: []byte(text), forward: forward, done: make(chan struct{})}
	return p.cut.done
}

// take disarms and returns the armed cut if b holds its text.
func (p *Proxy) take(b []byte) *cut {
	p.mu.Lock()
	defer p.mu.Unlock()
	c := p.cut
	if c == nil || !bytes.Contains(b, c.text) {
		return nil
	}
	p.cut = nil
	return c
}

func (p *Proxy) close() {
	p.mu.Lock()
	p.closed = true
	p.closeAllLocked()
	p.mu.Unlock()
	_ = p.ln.Close()
	p.wg.Wait()
}

func (p *Proxy) closeAllLocked() {
	for c := range p.conns {
		_ = c.Close()
	}
	clear(p.conns)
}

func (p *Proxy) serve() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if errors.Is(err, net.ErrClosed) {
			return
		}
		if err != nil {
			// Out of file descriptors or the like: back off as net/http does.
			time.Sleep(5 * time.Millisecond)
			continue
		}
		p.wg.Add(1)
		go p.handle(c)
	}
}

func (p *Proxy) handle(client net.Conn) {
	defer p.wg.Done()
	if !p.track(client) {
		return
	}
	upstream, err := net.DialTimeout("tcp", p.target, 5*time.Second)
	if err != nil {
		p.release(client)
		return
	}
	if !p.track(upstream) {
		p.release(client)
		return
	}
	var lost atomic.Pointer[cut] // a LoseAnswer cut of this connection, once its message went
	done := make(chan struct{})
	go func() {
		defer close(done)
		pipe(client, upstream, func(b []byte) bool {
			c := p.take(b)
			switch {
			case c == nil:
				return true
			case c.forward:
				lost.Store(c) // before the message goes: its answer cannot come first
				return true
			}
			p.release(client, upstream)
			close(c.done)
			return false
		})
		p.release(client, upstream)
	}()
	pipe(upstream, client, func([]byte) bool {
		if d := p.slow.Load(); d > 0 {
			time.Sleep(time.Duration(d))
		}
		c := lost.Load()
		if c == nil {
			return true
		}
		p.release(client, upstream)
		close(c.done)
		return false
	})
	p.release(client, upstream)
	<-done
}

// pipe copies from src to dst until either fails or pass, shown each read before it
// is written, says to stop.
func pipe(src, dst net.Conn, pass func([]byte) bool) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if !pass(buf[:n]) {
				return
			}
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// track registers c as open, or closes it when the proxy is down or closed; it reports
// whether c was registered.
func (p *Proxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.down || p.closed {
		_ = c.Close()
		return false
	}
	p.conns[c] = struct{}{}
	return true
}

func (p *Proxy) release(cs ...net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range cs {
		delete(p.conns, c)
		_ = c.Close()
	}
}

// ProxyFor starts a proxy (NewProxy) in front of the server dbURL names and returns
// it with dbURL through it (ProxiedURL).
func ProxyFor(t testing.TB, dbURL string) (*Proxy, string) {
	t.Helper()
	cfg, err := pgx.ParseConfig(dbURL)
	if err != nil {
		t.Fatalf("dbtest: parse database url: %v", err)
	}
	p := NewProxy(t, net.JoinHostPort(cfg.Host, strconv.Itoa(int(cfg.Port))))
	return p, ProxiedURL(t, dbURL, p)
}

// ProxiedURL returns the PostgreSQL connection string dbURL with its host and port
// replaced by the proxy's address. It takes URLs (postgres://...) and keyword/value
// strings (host=... port=...).
func ProxiedURL(t testing.TB, dbURL string, p *Proxy) string {
	t.Helper()
	host, port, err := net.SplitHostPort(p.Addr())
	if err != nil {
		t.Fatalf("dbtest: proxy address: %v", err)
	}
	if !isURL(dbURL) {
		// In a keyword/value string a later keyword wins.
		return dbURL + " host=" + host + " port=" + port
	}
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatalf("dbtest: parse database url: %v", err)
	}
	u.Host = net.JoinHostPort(host, port)
	// A host or port in the query string would win over the one in the authority.
	q := u.Query()
	if q.Has("host") || q.Has("port") {
		q.Del("host")
		q.Del("port")
		u.RawQuery = q.Encode()
	}
	return u.String()
}
