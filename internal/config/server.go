package config

import (
	"fmt"
	"time"
)

// HTTPLimits bound what one connection may take of a listener (the public one and the
// metrics'): a client that sends its request slowly, or never, is cut off instead of
// holding a connection and its goroutine for as long as it likes. Live streams lift
// the read deadline for themselves once they start (web: startSSE).
type HTTPLimits struct {
	// ReadHeaderTimeout is how long a request's line and headers may take to arrive
	// (READ_HEADER_TIMEOUT).
	ReadHeaderTimeout time.Duration
	// ReadTimeout bounds a whole request, body included (READ_TIMEOUT). net/http's
	// watch for a client hanging up shares the connection's read deadline, so it
	// also ends a request's context: it must outlast a request's own deadline (15 s
	// in web).
	ReadTimeout time.Duration
	// IdleTimeout is how long a kept-alive connection may wait for its next request
	// (IDLE_TIMEOUT).
	IdleTimeout time.Duration
	// MaxHeaderBytes bounds a request's line and headers (MAX_HEADER_BYTES).
	MaxHeaderBytes int
}

// StreamLimits bound the live seat streams one instance serves at once: each is a
// connection and a goroutine for as long as the page stays open.
type StreamLimits struct {
	// PerSession is the streams of one session the server issued: a browser's tabs
	// (STREAMS_PER_SESSION).
	PerSession int
	// PerAddress is the streams of one client address, IPv6 counted per /64, a
	// household or an office behind one address (STREAMS_PER_ADDRESS).
	PerAddress int
	// Max is the streams of the whole instance (STREAMS_MAX).
	Max int
}

// Defaults of the server's limits.
const (
	DefaultReadHeaderTimeout = 5 * time.Second
	DefaultReadTimeout       = 30 * time.Second
	DefaultIdleTimeout       = 2 * time.Minute
	DefaultMaxHeaderBytes    = 64 << 10
	DefaultStreamsPerSession = 6 // the most an HTTP/1.1 browser opens to one host anyway
	DefaultStreamsPerAddress = 64
	DefaultStreamsMax        = 10_000
)

// loadServer reads the listeners' and the streams' limits through Load's readers,
// which note what they refuse.
func loadServer(c *Config, num func(string, int) int, dur func(string, time.Duration) time.Duration) []error {
	c.HTTP = HTTPLimits{
		ReadHeaderTimeout: dur("READ_HEADER_TIMEOUT", DefaultReadHeaderTimeout),
		ReadTimeout:       dur("READ_TIMEOUT", DefaultReadTimeout),
		IdleTimeout:       dur("IDLE_TIMEOUT", DefaultIdleTimeout),
		MaxHeaderBytes:    num("MAX_HEADER_BYTES", DefaultMaxHeaderBytes),
	}
	c.Streams = StreamLimits{
		PerSession: num("STREAMS_PER_SESSION", DefaultStreamsPerSession),
		PerAddress: num("STREAMS_PER_ADDRESS", DefaultStreamsPerAddress),
		Max:        num("STREAMS_MAX", DefaultStreamsMax),
	}
	var errs []error
	if h := c.HTTP; h.ReadTimeout > 0 && h.ReadTimeout < h.ReadHeaderTimeout {
		errs = append(errs, fmt.Errorf("READ_TIMEOUT=%s: shorter than READ_HEADER_TIMEOUT (%s), which is part of it", h.ReadTimeout, h.ReadHeaderTimeout))
	}
	if n := c.HTTP.MaxHeaderBytes; n > 0 && n < 4<<10 {
		errs = append(errs, fmt.Errorf("MAX_HEADER_BYTES=%d: want 4096 or more, room for a browser's cookies", n))
	}
	return errs
}
