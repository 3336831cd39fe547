package web

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/labstack/echo/v4"

	"boxoffice/internal/booking"
	"boxoffice/internal/verification"
	"boxoffice/views"
)

// "Find my tickets": a buyer types an email and that address is sent one email with
// the link of each of its orders (booking.Buyer.SendOrderLinks). The links go to the
// address only, so typing someone else's reveals nothing; the answer is the same
// whether or not the address has orders, and the asks are limited per client address
// and per email address, so the page is neither a way to tell which addresses bought
// nor a way to fill a stranger's inbox.

// ticketsPath is the page's address.
const ticketsPath = "/tickets"

// Limits on asks for orders' links: per client address (IPv6 per /64), enough for a
// household or an office behind one; per email address, a few an hour, whoever asks.
// Like the other limits they count in Redis across instances and let asks through
// while Redis is away (each ask still sends at most one email).
var (
	ticketsPerAddress = redis_rate.Limit{Rate: 10, Burst: 10, Period: time.Hour}
	ticketsPerEmail   = redis_rate.Limit{Rate: 3, Burst: 3, Period: time.Hour}
)

// sendOrderLinks is the ask, for the page and the API alike: an error for an address
// that is not one or an ask over a limit, and otherwise nil, whatever the address's
// orders.
func (s *server) sendOrderLinks(c echo.Context, email string) error {
	addr, err := verification.Normalise(email)
	if err != nil {
		return badRequest("invalid_email", "Type one email address, such as name@example.com.")
	}
	if s.limiter != nil {
		ctx := c.Request().Context()
		wait, ok := s.limiter.allow(ctx, "tickets:"+s.clientNet(c), ticketsPerAddress)
		if ok {
			sum := sha256.Sum256([]byte(addr)) // the address itself stays out of Redis
			wait, ok = s.limiter.allow(ctx, "tickets-email:"+hex.EncodeToString(sum[:16]), ticketsPerEmail)
		}
		if !ok {
			return &apiError{Status: http.StatusTooManyRequests, Code: "rate_limited", RetryAfter: wait,
				Message: "The links were asked for too often lately; try again " + untilText(time.Duration(wait)*time.Second) + "."}
		}
	}
	err = s.Buyer.SendOrderLinks(c.Request().Context(), addr)
	if errors.Is(err, booking.ErrNoJobs) {
		return &apiError{Status: http.StatusServiceUnavailable, Code: "email_unavailable", Message: "Email cannot be sent right now; try again later."}
	}
	return err
}

func (s *server) findTicketsView(c echo.Context) views.FindTickets {
	return views.FindTickets{Page: buyerPage(c, "Find my tickets"), Action: ticketsPath, CSRFField: csrfForm}
}

// showFindTickets is the page's form.
func (s *server) showFindTickets(c echo.Context) error {
	return render(c, http.StatusOK, personal, views.FindTicketsPage(s.findTicketsView(c)))
}

// submitFindTickets sends the typed address its orders' links and says the same for
// every address.
func (s *server) submitFindTickets(c echo.Context) error {
	m := s.findTicketsView(c)
	m.Email = strings.TrimSpace(c.FormValue("email"))
	err := s.sendOrderLinks(c, m.Email)
	var ae *apiError
	if errors.As(err, &ae) && (ae.Status == http.StatusBadRequest || ae.Status == http.StatusTooManyRequests) {
		m.Message = ae.Message
		if ae.RetryAfter > 0 {
			c.Response().Header().Set("Retry-After", strconv.Itoa(ae.RetryAfter))
		}
		return render(c, ae.Status, personal, views.FindTicketsPage(m))
	} else if err != nil {
		return err
	}
	m.Sent = true
	return render(c, http.StatusOK, personal, views.FindTicketsPage(m))
}

// orderLinksAnswer is the one answer to an ask.
type orderLinksAnswer struct {
	Message string `json:"message"`
}

// postOrderLinks is the API's ask: 202 whatever the address's orders.
func (s *server) postOrderLinks(c echo.Context) error {
	var in struct {
		Email string `json:"email"`
	}
	if err := decodeJSON(c, &in); err != nil {
		return err
	}
	if err := s.sendOrderLinks(c, in.Email); err != nil {
		return err
	}
	return c.JSON(http.StatusAccepted, orderLinksAnswer{
		Message: "If there are orders made with this address, an email with the link to each is on its way to it."})
}
