package web

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/labstack/echo/v4"

	"boxoffice/internal/booking"
	"boxoffice/internal/clientnet"
	"boxoffice/internal/config"
	"boxoffice/internal/waitroom"
	"boxoffice/internal/zone"
)

// Limits per client address, across every instance: what a script gains by opening a
// session a call. The buyer limits count per session, and a session costs one request;
// an address is what a script cannot multiply without more machines. So new sessions
// and waiting-room joins are counted per address and hour, hold calls per address and
// minute (redis_rate's GCRA, as the per-buyer limit: the allowance refills evenly, and
// a whole period's worth may come at once), and the seats held at once per address and
// event are counted by the hold statements themselves (booking:
// Config.MaxHeldPerClient).
//
// An address is the connection's, or what a trusted proxy says in X-Forwarded-For
// (Echo's IPExtractor, set in New). IPv6 addresses count by their /64: one home or
// office gets a /64, and can rotate through its 2^64 addresses at will.
//
// Like the per-buyer limit these fail open: Redis away, the calls go through (the
// seats held at once are still counted, in PostgreSQL).

// What refused a call, in a 429 rate_limited answer's limitedBy.
const (
	limitedByBuyer    = "buyer"            // seat calls of one buyer (RATE_LIMIT)
	limitedByAddress  = "address"          // seat calls without a buyer yet, per address
	limitedBySessions = "address_sessions" // new sessions (buyer ids) per address
	limitedByJoins    = "address_joins"    // waiting-room joins per address
	limitedByHolds    = "address_holds"    // hold calls per address
	limitedByCodes    = "address_codes"    // access codes entered per address
	limitedBySeats    = "address_seats"    // seats and places held at once per address
)

// addressWords say, for people, why a call from their address was refused.
var addressWords = map[string]string{
	limitedBySessions: "Too many new visitors have come from your internet connection lately " +
		"(everyone on your network counts together). Try again in a little while, with cookies switched on.",
	limitedByJoins: "Too many people from your internet connection have joined the waiting room lately " +
		"(everyone on your network counts together). Try again in a little while.",
	limitedByHolds: "Too many seat requests have come from your internet connection in the last minute " +
		"(everyone on your network counts together). Wait a moment and try again.",
	limitedByCodes: "Too many access codes have been entered from your internet connection lately " +
		"(everyone on your network counts together). Try again in a little while.",
}

// perAddressLimits are the limits per address of cfg, by kind; a limit that is off is
// left out.
func perAddressLimits(cfg config.PerAddress) map[string]redis_rate.Limit {
	out := map[string]redis_rate.Limit{}
	for kind, l := range map[string]redis_rate.Limit{
		limitedBySessions: redis_rate.PerHour(cfg.SessionsPerHour),
		limitedByJoins:    redis_rate.PerHour(cfg.JoinsPerHour),
		limitedByHolds:    redis_rate.PerMinute(cfg.HoldsPerMinute),
		limitedByCodes:    redis_rate.PerHour(cfg.CodesPerHour),
	} {
		if l.Rate > 0 {
			out[kind] = l
		}
	}
	return out
}

// clientNet is the network the request comes from.
func (s *server) clientNet(c echo.Context) string { return clientnet.Key(c.RealIP()) }

// limitAddress counts one call of kind (limitedBySessions, …) from the request's
// address: past the limit, a 429 rate_limited with Retry-After and words for people.
func (s *server) limitAddress(c echo.Context, kind string) error {
	return s.checkAddress(c, kind, s.limiter.allow)
}

// peekAddress is limitAddress without counting the call: refused only if the address
// is already past its limit of kind.
func (s *server) peekAddress(c echo.Context, kind string) error {
	return s.checkAddress(c, kind, s.limiter.peek)
}

// checkAddress asks ask about the request's address's limit of kind.
func (s *server) checkAddress(c echo.Context, kind string, ask func(context.Context, string, redis_rate.Limit) (int, bool)) error {
	limit, on := s.limiter.perAddress[kind]
	if !on {
		return nil
	}
	if wait, ok := ask(c.Request().Context(), kind+":"+s.clientNet(c), limit); !ok {
		return &apiError{Status: http.StatusTooManyRequests, Code: "rate_limited", LimitedBy: kind, RetryAfter: wait,
			Message: addressWords[kind]}
	}
	return nil
}

// join is the waiting room's Join, counted against the address's joins.
func (s *server) join(c echo.Context, ev waitroom.Event, visitor string) (waitroom.Status, error) {
	if err := s.limitAddress(c, limitedByJoins); err != nil {
		return waitroom.Status{}, err
	}
	return s.Queue.Join(c.Request().Context(), ev, visitor)
}

// limitHold counts a hold call against the address's and sets the network the hold
// counts under for the seats held at once.
func (s *server) limitHold(c echo.Context, req *booking.HoldRequest) error {
	if err := s.limitAddress(c, limitedByHolds); err != nil {
		return err
	}
	req.Client = s.clientNet(c)
	req.AccessCode = s.sessionCode(c, req.EventID).ID
	return nil
}

// seatsHeldError is the answer when the address holds all the seats it may at once.
// Its time is on the clocks of the event's zone loc.
func seatsHeldError(e *booking.ClientLimitError, loc *time.Location) *apiError {
	held := e.Held
	return &apiError{Status: http.StatusTooManyRequests, Code: "rate_limited", LimitedBy: limitedBySeats,
		Limit: e.Limit, Held: &held, RetryAfter: max(1, seconds(time.Until(e.NextFree))),
		Message: fmt.Sprintf("%d seats and places for this event are held from your internet connection right now, "+
			"the most one connection may hold at once (everyone on your network counts together). "+
			"Try again when one of those holds is bought or released, or at %s when the first runs out.",
			e.Held, zone.Clock(e.NextFree, loc))}
}
