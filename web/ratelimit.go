package web

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/labstack/echo/v4"
	"github.com/redis/go-redis/v9"

	"boxoffice/internal/waitroom"
)

// Rate limits on seat selection, per buyer across every instance, so that a refresh
// script gains nothing. The limiter is redis_rate's GCRA (one Lua script per call)
// behind a middleware of our own rather than Echo's RateLimiter with a custom store:
// Echo's store interface is Allow(identifier) (bool, error), with no request context
// to bound the Redis call by and no Retry-After to give back, and it denies on a store
// error, where we must let the request through.

const (
	// rateTimeout bounds the limiter's Redis call. A limiter must never stop sales:
	// past it (or on any Redis error) the request goes through. It is the waiting
	// room's limit for a Redis call, which tells a Redis that hangs from one that
	// answers late (waitroom.RedisTimeout). The call runs while the admission check
	// reads the room, which waits as long.
	rateTimeout = waitroom.RedisTimeout
	// rateOpenFor is how long the limiter stays out of the way after a Redis failure,
	// so that a Redis that hangs costs one timeout per instance now and then rather
	// than one per request.
	rateOpenFor = 2 * time.Second
	// anonymousFactor widens the limit of requests without a buyer yet, limited by
	// address instead: many first visits share an address behind a carrier's NAT.
	anonymousFactor = 5
)

// rateLimiter limits each buyer's seat-selection calls.
type rateLimiter struct {
	limiter   *redis_rate.Limiter
	limit     redis_rate.Limit // per buyer
	anonymous redis_rate.Limit // per address, for sessions with no buyer yet
	prefix    string
	log       logger
	openUntil atomic.Int64 // unix nanoseconds; until then requests pass unchecked

	// perAddress are the limits per address and minute, by kind (addresslimit.go).
	perAddress map[string]redis_rate.Limit
}

// logger is what the limiter logs to.
type logger interface {
	WarnContext(ctx context.Context, msg string, args ...any)
}

func newRateLimiter(rdb redis.UniversalClient, prefix string, perSecond, burst int, log logger) *rateLimiter {
	return &rateLimiter{
		limiter:   redis_rate.NewLimiter(rdb),
		limit:     redis_rate.Limit{Rate: perSecond, Burst: burst, Period: time.Second},
		anonymous: redis_rate.Limit{Rate: perSecond * anonymousFactor, Burst: burst * anonymousFactor, Period: time.Second},
		// redis_rate puts its own "rate:" before every key.
		prefix: prefix + "limit:",
		log:    log,
	}
}

// rateLimit answers 429 rate_limited, with Retry-After, to a buyer over the limit. It
// goes after the session middleware: the buyer id is the key. Its Redis call runs
// while the admission check after it (admission) makes its own, one round trip's
// wait instead of two: the verdict is read before anything the request changes or
// answers (rateVerdict, in admission and in rateChecked, which goes last before the
// handler), and a refusal is the answer whatever the admission said.
func (s *server) rateLimit(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		key, limit, by := "b:"+s.pageBuyer(c), s.limiter.limit, limitedByBuyer
		if key == "b:" {
			key, limit, by = "ip:"+s.clientNet(c), s.limiter.anonymous, limitedByAddress
		}
		if s.limiter.standsOpen() { // nothing to ask, and nothing to ask meanwhile
			return next(c)
		}
		ctx := c.Request().Context()
		type answer struct {
			wait int
			ok   bool
		}
		asked := make(chan answer, 1)
		go func() {
			wait, ok := s.limiter.allow(ctx, key, limit)
			asked <- answer{wait, ok}
		}()
		verdict := sync.OnceValue(func() error {
			if a := <-asked; !a.ok {
				return &apiError{Status: http.StatusTooManyRequests, Code: "rate_limited", LimitedBy: by, RetryAfter: a.wait,
					Message: "Too many requests from this browser; wait a moment and try again."}
			}
			return nil
		})
		c.Set(rateVerdictKey, verdict)
		err := next(c)
		if rerr := verdict(); rerr != nil && !c.Response().Committed {
			return rerr
		}
		return err
	}
}

// rateVerdictKey is the Echo context key of the rate limit's verdict (rateLimit).
const rateVerdictKey = "rate.verdict"

// rateVerdict waits for the request's rate limit verdict, if it has one: a refusal,
// or nil.
func rateVerdict(c echo.Context) error {
	if v, ok := c.Get(rateVerdictKey).(func() error); ok {
		return v()
	}
	return nil
}

// rateChecked goes last before a rate-limited handler: the handler runs only once the
// limit let the request through.
func rateChecked(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if err := rateVerdict(c); err != nil {
			return err
		}
		return next(c)
	}
}

// allow reports whether one more call under key is within limit, counting it, and,
// if not, how many whole seconds to wait. Redis failing lets the call through.
func (l *rateLimiter) allow(ctx context.Context, key string, limit redis_rate.Limit) (retryAfter int, ok bool) {
	return l.take(ctx, key, limit, 1)
}

// peek is allow without counting the call: whether one more is within limit now. A
// caller that goes on counts it with allow once it has done what it counts.
func (l *rateLimiter) peek(ctx context.Context, key string, limit redis_rate.Limit) (retryAfter int, ok bool) {
	return l.take(ctx, key, limit, 0)
}

// standsOpen reports whether the limiter is out of the way for now, after a Redis
// failure (rateOpenFor): calls pass unchecked.
func (l *rateLimiter) standsOpen() bool { return time.Now().UnixNano() < l.openUntil.Load() }

// take asks whether one more call under key is within limit, counting it when n is 1
// (a cost of 0 reads the bucket and changes nothing; Remaining is then how many more
// calls fit now).
func (l *rateLimiter) take(ctx context.Context, key string, limit redis_rate.Limit, n int) (retryAfter int, ok bool) {
	if l.standsOpen() {
		return 0, true
	}
	ctx, cancel := context.WithTimeout(ctx, rateTimeout)
	defer cancel()
	res, err := l.limiter.AllowN(ctx, l.prefix+key, limit, n)
	if err != nil {
		if !errors.Is(ctx.Err(), context.Canceled) { // not the caller going away
			l.openUntil.Store(time.Now().Add(rateOpenFor).UnixNano())
			l.log.WarnContext(ctx, "rate limiter unavailable: letting seat calls through", "for", rateOpenFor, "err", err)
		}
		return 0, true
	}
	if (n > 0 && res.Allowed > 0) || (n == 0 && res.Remaining >= 1) {
		return 0, true
	}
	wait := res.RetryAfter
	if wait <= 0 { // a look at a full bucket: the next call fits one interval on
		wait = limit.Period / time.Duration(max(limit.Rate, 1))
	}
	return max(1, seconds(wait)), false
}
