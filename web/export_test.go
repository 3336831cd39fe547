package web

import (
	"boxoffice/internal/staff"
	"cmp"
	"context"
	"net"
	"net/http"

	"github.com/labstack/echo/v4"
)

// What the whole-program tests (package web_test, beside this package: they build the
// program through internal/apptest, whose composition root imports web) read of web's
// own names: the JSON answers they decode, the headers, cookies and words they check.

type (
	HoldJSON           = holdJSON
	OrderJSON          = orderJSON
	CheckoutAnswerJSON = checkoutAnswerJSON
	QueueJSON          = queueJSON
	SessionJSON        = sessionJSON
	SeatMapJSON        = seatMapJSON
	WebhookAnswerJSON  = webhookAnswerJSON
	PayAnswerJSON      = payAnswerJSON
	BoardJSON          = boardJSON
	SeatJSON           = seatJSON
	MapSeatJSON        = mapSeatJSON
	GATierJSON         = gaTierJSON
	EventJSON          = eventJSON
	ConfirmedJSON      = confirmedJSON
)

const (
	AdmissionHeader   = admissionHeader
	ReplayedHeader    = replayedHeader
	MapCacheControl   = mapCacheControl
	FormTime          = "2006-01-02T15:04" // a datetime-local field's value
	LimitedBySessions = limitedBySessions
	LimitedBySeats    = limitedBySeats
	IdempotencyHeader = idempotencyHeader
	QueueStartCookie  = queueStartCookie
	LimitedByJoins    = limitedByJoins
	LimitedByHolds    = limitedByHolds
	BuyerKey          = buyerKey
	CSRFHeader        = csrfHeader
	CSRFCookie        = csrfCookie
	CSRFForm          = csrfForm
	DeviceCookie      = deviceCookie
)

var (
	OrderURL            = orderURL
	AheadText           = aheadText
	SeatPageBudget      = seatPageBudget
	WaitText            = waitText
	RegisterLimit       = registerLimit
	ProofWorker         = proofWorker
	ProofScript         = proofScript
	ProofModule         = proofModule
	OddsText            = oddsText
	GzipLen             = gzipLen
	ErrStreamsFull      = errStreamsFull
	AdmissionKey        = admissionKey
	AdmissionCookieName = admissionCookieName
	CheckAttrs          = checkAttrs
)

// Server is the server the handler runs on, built from Deps as New builds it, for the
// tests that call a handler's part directly (SeatFragments) or serve one route with
// settings of their own (NewStreamServer).
type Server = server

// NewServer builds the server as New does, without its routes.
func NewServer(d Deps) (*Server, error) { return newServer(d) }

// SeatFragments is what the live stream sends for changed seats (seatFragments).
func (s *server) SeatFragments(ctx context.Context, eventID int64, seatIDs []int64, ga bool) ([]byte, error) {
	return s.seatFragments(ctx, eventID, seatIDs, ga)
}

// SeatStreams is the live seat stream with its counts.
type SeatStreams = seatStreams

// NewStreamServer serves the live seat stream alone, GET /events/:slug/stream, on the
// server d builds, with o's limits, heartbeat and hub: what o leaves unset of the
// stream's parts (its events, its fragments, its cookie) is the server's own.
func NewStreamServer(d Deps, o StreamOptions) (http.Handler, *SeatStreams, error) {
	s, err := newServer(d)
	if err != nil {
		return nil, nil, err
	}
	def := s.streams.opt
	o.Hub = cmp.Or(o.Hub, def.Hub)
	if o.Event == nil {
		o.Event = def.Event
	}
	if o.Fragments == nil {
		o.Fragments = def.Fragments
	}
	o.SessionCookie = cmp.Or(o.SessionCookie, def.SessionCookie)
	o.Log = cmp.Or(o.Log, def.Log)
	st := newSeatStreams(o)
	e := echo.New()
	e.HTTPErrorHandler = s.handleError
	e.GET("/events/:slug/stream", st.streamSeats)
	return e, st, nil
}

// Sessions is how many sessions hold streams now.
func (st *seatStreams) Sessions() int {
	st.mu.Lock()
	defer st.mu.Unlock()
	return len(st.bySession)
}

// ClientAddr is the handler's client address extractor (clientAddr).
func ClientAddr(trusted []*net.IPNet) echo.IPExtractor { return clientAddr(trusted) }

// AdminRoute is a route of the admin routes table (routes_admin.go).
type AdminRoute struct {
	Method, Path string
	Roles        []staff.Role
}

// AdminRoutes are the admin routes table by "METHOD path", with HEAD beside each GET
// that is not a stream (Echo answers HEAD by the GET route), and the /admin routes
// open to anyone (the login and logout).
func AdminRoutes() (table map[string]AdminRoute, open map[string]bool) {
	table = map[string]AdminRoute{}
	for _, r := range (&server{}).adminRoutes() {
		table[r.method+" "+r.path] = AdminRoute{Method: r.method, Path: r.path, Roles: r.roles}
		if r.method == http.MethodGet && !adminStreams[r.path] {
			table["HEAD "+r.path] = AdminRoute{Method: http.MethodHead, Path: r.path, Roles: r.roles}
		}
	}
	return table, adminOpen
}

// The order files' paths below an order's page.
const (
	PDFSuffix = pdfSuffix
	ICSSuffix = icsSuffix
)

// The orders' access links as the tests send and read them.
const (
	OrderTokenHeader = orderTokenHeader
	TicketsPath      = ticketsPath
)

// OrderLinksAnswer is the one answer to a "find my tickets" ask.
type OrderLinksAnswer = orderLinksAnswer

// The limits of "find my tickets".
var (
	TicketsPerEmail   = ticketsPerEmail
	TicketsPerAddress = ticketsPerAddress
)
