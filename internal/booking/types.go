package booking

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// HoldID names a hold. It carries its event, so that every statement about a hold can
// name the event it belongs to (the schema stays distributable by event). Its text form
// is "<event>-<hold>", e.g. "7-1042".
type HoldID struct {
	Event int64
	Seq   int64
}

// String is the text form used in URLs and JSON.
func (h HoldID) String() string { return fmt.Sprintf("%d-%d", h.Event, h.Seq) }

// ParseHoldID reads the text form of a HoldID.
func ParseHoldID(s string) (HoldID, error) {
	ev, seq, ok := strings.Cut(s, "-")
	if !ok {
		return HoldID{}, fmt.Errorf("hold id %q: want <event>-<hold>", s)
	}
	e, err1 := ParseID(ev)
	n, err2 := ParseID(seq)
	if err1 != nil || err2 != nil {
		return HoldID{}, fmt.Errorf("hold id %q: want <event>-<hold>", s)
	}
	return HoldID{Event: e, Seq: n}, nil
}

// ParseID reads a positive decimal id that fits in a bigint.
func ParseID(s string) (int64, error) {
	if s == "" || len(s) > 19 || strings.TrimLeft(s, "0123456789") != "" {
		return 0, fmt.Errorf("id %q: want a positive whole number", s)
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("id %q: want a positive whole number", s)
	}
	return n, nil
}

// Seat is one seat as a buyer sees it in a hold or order.
type Seat struct {
	ID         int64
	Section    string
	Row        string
	Number     int
	PriceCents int
}

// GAPlaces is a number of general-admission places of one tier.
type GAPlaces struct {
	TierID     int64
	TierName   string
	Quantity   int
	PriceCents int
}

// Hold is seats or places kept for one buyer until ExpiresAt.
type Hold struct {
	ID        HoldID
	Seats     []Seat
	GA        *GAPlaces
	ExpiresAt time.Time
	// CheckoutBegun: an order names the hold, so it can no longer change (basket.go).
	// Only BuyerHolds fills it in.
	CheckoutBegun bool
	// Added are the seats the call that answered it put into the hold (exact seats:
	// those asked for, now in it); the rest of Seats were there before. Only
	// AddToBasket and AddSeats fill it in.
	Added []Seat
}

// HoldRequest asks for a hold: exact seats (SeatIDs, when not nil, and nothing else),
// best available (Quantity, with Section and Together; an empty Section is any), or
// general admission (GATierID and Quantity). Buyer.CheckHold says what is wrong with
// one.
type HoldRequest struct {
	EventID int64
	Buyer   string
	// Client is the network the request came from (an IPv4 address, or the /64 of an
	// IPv6 one), counted against Config.MaxHeldPerClient; empty: none, as for staff.
	Client   string
	SeatIDs  []int64
	Quantity int
	Section  string
	// PriceCents, if set, asks best available for seats at this price only (a price
	// level of the map's legend); nil: any price.
	PriceCents *int
	Together   bool
	GATierID   int64
	// AccessCode is the id of the access code the buyer entered for the event (0:
	// none): before the onsale it opens the code's presale, within the code's quota,
	// and the hold records it (see migrations/functions/presale.sql).
	AccessCode int64
}

// The ways a hold chooses its places (HoldRequest.Kind).
const (
	HoldKindSeats    = "seats"    // exactly the seats asked for: one batched statement
	HoldKindBest     = "best"     // best available: a transaction of several
	HoldKindStanding = "standing" // general admission: a transaction of several
)

// Kind is the way the request chooses its places: the asked-for seats if it names
// any, else standing places of its tier if it names one, else best available.
func (r HoldRequest) Kind() string {
	switch {
	case len(r.SeatIDs) > 0:
		return HoldKindSeats
	case r.GATierID != 0:
		return HoldKindStanding
	}
	return HoldKindBest
}

// Order statuses. An order only moves forward: pending to confirmed, refund_pending or
// expired; refund_pending to refunded; expired to refund_pending, if a payment nobody
// knew of turns up after all.
const (
	StatusPending       = "pending"
	StatusConfirmed     = "confirmed"
	StatusRefundPending = "refund_pending"
	StatusRefunded      = "refunded"
	// StatusExpired: the hold lapsed with no payment under way. Nothing was charged,
	// and the order counts nowhere any more.
	StatusExpired = "expired"
)

// Reasons, in Order.StatusReason and OrderRefund.Reason. The first three qualify a
// pending order; the rest say why an order, or one of its payments, sold nothing.
const (
	ReasonPaymentProcessing = "payment_processing" // charged; waiting for the provider's word
	ReasonPaymentUnknown    = "payment_unknown"    // the charge's answer was lost; being checked
	ReasonPaymentFailed     = "payment_failed"     // declined or failed; the buyer may pay again
	ReasonHoldLapsed        = "hold_lapsed"        // expired: the hold ran out unpaid
	ReasonSeatsUnavailable  = "seats_unavailable"  // the hold lapsed and its seats were sold
	ReasonSoldOut           = "sold_out"           // the hold lapsed and its GA places were sold
	ReasonBuyerLimit        = "buyer_limit"        // selling would take the buyer past the limit
	ReasonPresaleQuota      = "presale_quota"      // the presale code's places were all taken
	ReasonAmountMismatch    = "amount_mismatch"    // the amount paid is not the order's
	ReasonOrderExpired      = "order_expired"      // paid after the order had expired
	ReasonAlreadyPaid       = "already_paid"       // a second payment for a confirmed order
	ReasonOtherPayment      = "other_payment"      // a payment not the order's, while its own was under way
	ReasonOrderClosed       = "order_closed"       // paid after the order sold nothing already
)

// Order is a checkout of one hold.
type Order struct {
	ID           int64
	EventID      int64
	HoldID       HoldID
	Email        string
	Status       string
	StatusReason string
	AmountCents  int
	Seats        []Seat
	GA           *GAPlaces
	Tickets      []Ticket
	// PaymentID is the provider's id of the payment the order keeps (confirmed), or of
	// the one under way when known.
	PaymentID string
	// PaymentUnderWay says a payment holds the order's claim: charged and awaiting the
	// provider (StatusReason payment_processing) or of unknown outcome
	// (payment_unknown). No other payment can start meanwhile.
	PaymentUnderWay bool
	// Refunds are the order's payments that sold nothing, given back.
	Refunds []OrderRefund
}

// OrderRefund is one payment of an order given back in full.
type OrderRefund struct {
	ID          int64 // the refund's own id: an email about it names it
	AmountCents int
	Reason      string // one of the Reason constants
	Done        bool   // the provider confirmed it; otherwise under way
}

// Ticket admits one person to one seat or GA place.
type Ticket struct {
	ID       int64
	SeatID   int64 // 0 for general admission
	GATierID int64 // 0 for a seat
	Code     string
}

// Event is a performance on sale, with its sales window and its waiting room's
// settings.
type Event struct {
	ID    int64
	Slug  string
	Name  string
	Venue string
	// Zone is the venue's time zone: every time of the event is shown in it
	// (zone.When). Never nil when read from the database.
	Zone     *time.Location
	StartsAt time.Time
	// OnsaleAt and SalesCloseAt bound the sale: holds, checkouts and payments are
	// refused before OnsaleAt and from SalesCloseAt on (the event's start unless set
	// otherwise). The database clock decides, in the statements that claim; these
	// fields are for showing the window, never for deciding it.
	OnsaleAt     time.Time
	SalesCloseAt time.Time
	// The waiting room: off, everyone passes straight through; on, at most QueueSlots
	// shoppers at once, admitted at QueueRate per second, each admission lasting
	// QueueTokenTTL unless used up, or QueueIdle if nothing is held by then.
	QueueEnabled  bool
	QueueSlots    int
	QueueRate     float64
	QueueTokenTTL time.Duration
	QueueIdle     time.Duration
	// QueuePaused stops admission (the control room's pause) without turning the
	// room off: the queue keeps its order. Set by QueuedEvents only.
	QueuePaused bool
	// VerifiedOnly: only sessions that confirmed a registered email may queue, hold
	// and buy, and each confirmed email is one buyer (web/verify.go).
	VerifiedOnly bool
}

// Seat statuses on the map.
const (
	SeatAvailable = "available"
	SeatHeld      = "held"
	SeatSold      = "sold"
)

// MapSeat is one seat on the seat map.
type MapSeat struct {
	ID         int64
	Section    string
	Row        string
	Number     int
	PriceCents int
	Rank       int // the venue's order of preference within a price, best first
	X, Y       int
	Accessible bool
	Status     string
}

// GATier is a general-admission tier and how many places it has left.
type GATier struct {
	ID         int64
	Name       string
	PriceCents int
	Capacity   int
	Remaining  int
}

// SeatMap is an event's seats and GA tiers as of At; it may be a second stale.
type SeatMap struct {
	EventID int64
	Seats   []MapSeat
	GATiers []GATier
	At      time.Time
	// Version is the event's change counter the map reflects: every change up to it is
	// in the map. A live page starts its stream of changes from it; 0 means unknown
	// (the stream then starts with a reset).
	Version int64
}

// SeatName names a seat for people: "Stalls, row F, seat 12". Every page, email and
// answer that names a seat says it this way.
func SeatName(section, row string, number int) string {
	return section + ", row " + row + ", seat " + strconv.Itoa(number)
}
