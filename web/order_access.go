package web

import (
	"context"
	"errors"
	"net/url"
	"strings"

	"github.com/labstack/echo/v4"

	"boxoffice/internal/booking"
	"boxoffice/internal/orderlink"
)

// An order is reached by the session that bought it, or by the holder of its access
// link: the signed token in its emails, in the query (?t=, for links) or the
// X-Order-Token header (for programs). A link opens the order's page, its tickets as
// PDF and its calendar entry; it gives no session, and nothing reached through it
// changes anything. A link staff revoked, forged or for another order is no access:
// the request then counts as its session's, and another buyer's order is not found.

// orderTokenHeader carries an order's access token on API calls.
const orderTokenHeader = "X-Order-Token"

// orderLinks signs the orders' access links and makes them absolute.
type orderLinks struct {
	sign *orderlink.Signer
	base string // BASE_URL
}

// host names the site in the calendar entries' UIDs: BASE_URL's host.
func (l orderLinks) host() string {
	if u, err := url.Parse(l.base); err == nil && u.Hostname() != "" {
		return u.Hostname()
	}
	return "localhost"
}

// orderAccess is how a request reached an order.
type orderAccess struct {
	buyer string // the session's buyer, when it reached the order as its buyer
	token string // the access link's token, when it reached the order through one
}

// path is the address of the order's page (suffix "") or of one of its files
// ("/tickets.pdf", "/event.ics") for whoever reached it this way: through a link, the
// address carries its token.
func (a orderAccess) path(id int64, suffix string) string {
	p := orderURL(id) + suffix
	if a.token != "" {
		p += "?" + orderlink.Param + "=" + url.QueryEscape(a.token)
	}
	return p
}

// orderToken is the access token the request carries, if any; one too long to be one
// is none.
func orderToken(c echo.Context) string {
	tok := c.QueryParam(orderlink.Param)
	if tok == "" {
		tok = c.Request().Header.Get(orderTokenHeader)
	}
	if len(tok) > orderlink.MaxToken {
		return ""
	}
	return tok
}

// orderByLink is the order the request's access link opens, or ErrOrderNotFound.
func (s *server) orderByLink(ctx context.Context, id int64, token string) (booking.Order, error) {
	if token == "" {
		return booking.Order{}, booking.ErrOrderNotFound
	}
	l, err := s.orderLinks.sign.Parse(token)
	if err != nil || l.OrderID != id {
		return booking.Order{}, booking.ErrOrderNotFound
	}
	return s.Buyer.OrderByLink(ctx, id, l.Version)
}

// orderFor is the order id as the request may see it: through its access link, or
// else as its session's buyer, which buyer finds (s.buyer creates one, the API's way;
// pageBuyerOf does not). Anything else is ErrOrderNotFound.
func (s *server) orderFor(c echo.Context, id int64, buyer func(echo.Context) (string, error)) (booking.Order, orderAccess, error) {
	ctx := c.Request().Context()
	if tok := orderToken(c); tok != "" {
		o, err := s.orderByLink(ctx, id, tok)
		if err == nil {
			return o, orderAccess{token: tok}, nil
		} else if !errors.Is(err, booking.ErrOrderNotFound) {
			return booking.Order{}, orderAccess{}, err
		}
	}
	b, err := buyer(c)
	if err != nil {
		return booking.Order{}, orderAccess{}, err
	}
	o, err := s.Buyer.Order(ctx, id, b)
	return o, orderAccess{buyer: b}, err
}

// pageBuyerOf is pageBuyer as orderFor takes it: a page never creates a buyer.
func (s *server) pageBuyerOf(c echo.Context) (string, error) { return s.pageBuyer(c), nil }

// orderPrivacy marks every answer about one order as for its reader alone: no search
// engine indexes it or follows its links, and a page reached through an access link
// sends no Referer anywhere, so the token never leaves in one. (Cache-Control is
// noStore's, on the routes' own middleware.)
func orderPrivacy(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		h := c.Response().Header()
		h.Set("X-Robots-Tag", "noindex, nofollow")
		if orderToken(c) != "" {
			h.Set(echo.HeaderReferrerPolicy, "no-referrer")
		}
		return next(c)
	}
}

// orderLinkURL is the order's absolute access link (its page, or a file of it) at the
// order's current version: what a calendar entry points at.
func (s *server) orderLinkURL(ctx context.Context, o booking.Order, acc orderAccess, suffix string) (string, error) {
	if acc.token != "" {
		return s.orderLinks.base + acc.path(o.ID, suffix), nil
	}
	v, err := s.Buyer.OrderLinkVersion(ctx, o.ID)
	if err != nil {
		return "", err
	}
	return s.orderLinks.base + s.orderLinks.sign.Path(orderlink.Link{OrderID: o.ID, Version: v}, suffix), nil
}

// redactedParams are the query parameters that carry secrets (an order's access
// token, a verification link's token): the request log writes them as "REDACTED".
var redactedParams = map[string]bool{orderlink.Param: true, "token": true}

// redactURI is a request URI as the log may keep it: its secret query values replaced.
func redactURI(uri string) string {
	path, query, ok := strings.Cut(uri, "?")
	if !ok {
		return uri
	}
	parts := strings.Split(query, "&")
	for i, p := range parts {
		k, _, _ := strings.Cut(p, "=")
		if name, err := url.QueryUnescape(k); err == nil && redactedParams[name] || redactedParams[k] {
			parts[i] = k + "=REDACTED"
		}
	}
	return path + "?" + strings.Join(parts, "&")
}

// orderIDParam is the order the path names; an id that cannot name one names none.
func orderIDParam(c echo.Context) (int64, error) {
	id, err := booking.ParseID(c.Param("orderId"))
	if err != nil {
		return 0, booking.ErrOrderNotFound
	}
	return id, nil
}
