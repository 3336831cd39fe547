package booking

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"

	"boxoffice/internal/db"
	"boxoffice/internal/dbgate"
	"boxoffice/internal/pricing"
	"boxoffice/internal/staff"
)

// How a box-office buyer pays: the money changes hands at the window.
const (
	PayCash        = "cash"
	PayCardPresent = "card_present"
)

// BoxOfficeProvider is the payments' provider of box-office sales.
const BoxOfficeProvider = "box_office"

// MaxSaleSeats bounds one box-office sale: a bound on one request's work, not on what
// a buyer may have (the per-buyer limit is for online buyers).
const MaxSaleSeats = 100

// Errors of box-office sales.
var (
	// ErrInvalidSale: no seats or too many, a seat named twice, no payment method, a
	// bad token, a name too long; the error says which.
	ErrInvalidSale = errors.New("invalid box-office sale")
	// ErrSaleFormUsed: the form's token sold other seats already (a page kept open,
	// or the browser's back button): nothing more is sold under it.
	ErrSaleFormUsed = errors.New("this sale form was used for another sale")
)

// Sale is a sale at the box office, paid on the spot: seats picked on the staff map
// (SeatIDs), or the best Quantity seats (in Section, Together), or Quantity places of
// the general-admission tier GATierID.
type Sale struct {
	EventID  int64
	SeatIDs  []int64
	Quantity int
	Section  string
	Together bool
	GATierID int64
	Method   string // PayCash or PayCardPresent
	// Types are how many tickets of each type (by id) the buyer wants; tickets not
	// named take their level's default type (deskprice.go).
	Types map[int64]int
	// Token is the sale form's own random key: the same form submitted twice sells
	// once, and the second answer is the first sale's order.
	Token     string
	BuyerName string // optional
	Email     string // optional; the confirmation is emailed when given
	StaffID   int64
	Address   string // the member's address, for the audit log
}

// SaleRecord is what the box office recorded of a sale, besides its order.
type SaleRecord struct {
	Method    string
	BuyerName string
	StaffName string
	At        time.Time
}

// saleBuyer owns a sale's hold and order: one per form, so the form's token is the
// buyer's lock and its key, and no session's buyer (random base32) looks like it.
func saleBuyer(token string) string { return "box-office:" + token }

func (sl Sale) check() error {
	ids := slices.Clone(sl.SeatIDs)
	slices.Sort(ids)
	switch {
	case (len(sl.SeatIDs) == 0) == (sl.Quantity == 0):
		return invalid(ErrInvalidSale, "pick seats on the map, or say how many seats or places: one of the two")
	case len(sl.SeatIDs) > MaxSaleSeats || sl.Quantity < 0 || sl.Quantity > MaxSaleSeats:
		return invalid(ErrInvalidSale, "sell 1 to %d seats or places at once", MaxSaleSeats)
	case sl.GATierID != 0 && sl.Quantity == 0:
		return invalid(ErrInvalidSale, "say how many standing places")
	case len(slices.Compact(ids)) != len(sl.SeatIDs):
		return invalid(ErrInvalidSale, "a seat is named twice")
	case sl.Method != PayCash && sl.Method != PayCardPresent:
		return invalid(ErrInvalidSale, "the payment must be cash or card")
	case len(sl.Token) < 16 || len(sl.Token) > 64:
		return invalid(ErrInvalidSale, "the form's token is missing; load the page again")
	case len(sl.BuyerName) > 200:
		return invalid(ErrInvalidSale, "the name must be at most 200 characters")
	case sl.StaffID == 0:
		return errors.New("sale without a member of staff")
	}
	return nil
}

// SellAtBoxOffice sells seats or places at the window at once, in one transaction and
// through the statements of an online sale: they are held as an online buyer's are
// (saleHold: a seat anyone else holds or bought is refused, all or nothing, and the
// sales window applies), the order made by OrderCreate, the money recorded as a payment that
// succeeded (the order keeps exactly one charge, as every confirmed order does), and
// the seats sold by SeatSell with their tickets. Selling the same form (Token) again
// returns the first sale's order and sells nothing; replayed reports whether it was
// such a repeat. The sale is audited in its transaction; the live map hears of the
// seats after commit.
func (s *Desk) SellAtBoxOffice(ctx context.Context, sl Sale) (o Order, replayed bool, err error) {
	if err := sl.check(); err != nil {
		return Order{}, false, err
	}
	// Someone is standing at the window while staff sell: at an onsale the sale's
	// statements go first in the queue for a connection, as a buyer's hold's do,
	// not behind the crowd's confirmations. A window sells a few a minute.
	ctx = dbgate.First(ctx)
	buyer := saleBuyer(sl.Token)
	turn, done, err := s.bestTurn(ctx, sl.holdRequest(buyer))
	if err != nil {
		return Order{}, false, err
	}
	defer done()
	var sale saleDone
	err = s.inTx(ctx, func(tx pgx.Tx, q *db.Queries) error {
		var err error
		sale, err = s.sellTx(ctx, tx, q, sl, buyer, turn)
		return err
	})
	if err != nil {
		return Order{}, false, err
	}
	if !sale.replayed {
		s.countConfirmed(sale.row) // a sale like any other for /metrics
	}
	s.announce(ctx, sl.EventID, sale.sold)
	if sale.ga {
		s.announceGA(ctx, sl.EventID)
	}
	_, o, err = s.orderView(ctx, sale.row.ID)
	return o, sale.replayed, translate(err)
}

// saleDone is what a box-office sale's transaction did.
type saleDone struct {
	row      db.Order // the sale's order, as committed
	sold     []int64  // the seats sold
	ga       bool     // general-admission places were sold
	replayed bool     // the form sold before: row is that sale's order, nothing more is sold
}

// sellTx is SellAtBoxOffice's transaction, under the form's buyer lock: the first
// sale of the form (Token) found again, or the hold, the order, the payment, the sale
// of the order, the box office's record of it, the email's job and the audit entry.
func (s *store) sellTx(ctx context.Context, tx pgx.Tx, q *db.Queries, sl Sale, buyer string, turn int) (saleDone, error) {
	// A double submit waits here for the first, then finds its order.
	if err := q.BuyerLock(ctx, db.BuyerLockParams{Buyer: buyer, EventID: sl.EventID}); err != nil {
		return saleDone{}, err
	}
	if row, found, err := saleOfForm(ctx, q, sl); err != nil || found {
		return saleDone{row: row, replayed: found}, err
	}
	h, err := s.saleHold(ctx, tx, q, sl, buyer, turn)
	if err != nil {
		return saleDone{}, err
	}
	quote, err := s.saleQuote(ctx, tx, sl, buyer, h)
	if err != nil {
		return saleDone{}, err
	}
	amount := int(quote.Total)
	row, err := createSaleOrder(ctx, q, sl, buyer, h, quote)
	if err != nil {
		return saleDone{}, err
	}
	if err := chargeVoucher(ctx, q, row, quote); err != nil {
		return saleDone{}, err
	}
	paymentID, err := payAtBoxOffice(ctx, q, row, amount, sl.Method)
	if err != nil {
		return saleDone{}, err
	}
	sold, reason, err := s.sellUpTo(ctx, tx, q, row, len(row.SeatIds)+int(row.GaQuantity), paymentID, nil)
	if err != nil {
		return saleDone{}, err
	}
	if reason != "" {
		// The seats were held a moment ago in this transaction: nothing should
		// take them. Selling nothing is still the safe answer.
		return saleDone{}, fmt.Errorf("box-office sale of order %d sold nothing: %s", row.ID, reason)
	}
	if err := q.BoxOfficeSaleRecord(ctx, db.BoxOfficeSaleRecordParams{
		EventID: sl.EventID, Token: sl.Token, OrderID: row.ID, StaffID: sl.StaffID,
		Method: sl.Method, BuyerName: sl.BuyerName,
	}); err != nil {
		return saleDone{}, err
	}
	if s.jobs != nil && sl.Email != "" {
		if err := s.jobs.OrderConfirmed(ctx, tx, row.ID); err != nil {
			return saleDone{}, err
		}
	}
	if row, err = q.OrderGet(ctx, row.ID); err != nil {
		return saleDone{}, err
	}
	err = staff.Audit(ctx, tx, sl.StaffID, "boxoffice.sale", OrderSubject(row.ID), nil,
		map[string]any{"orderId": row.ID, "seatIds": sold, "gaTierId": row.GaTierID, "gaQuantity": row.GaQuantity,
			"amountCents": amount, "types": sl.Types, "method": sl.Method, "buyerName": sl.BuyerName, "email": sl.Email}, sl.Address)
	return saleDone{row: row, sold: sold, ga: h.GA != nil}, err
}

// saleOfForm finds the order the sale's form (Token) made already; found reports
// whether there is one. ErrSaleFormUsed: it made another sale than this one.
func saleOfForm(ctx context.Context, q *db.Queries, sl Sale) (row db.Order, found bool, err error) {
	id, err := q.BoxOfficeSaleByToken(ctx, db.BoxOfficeSaleByTokenParams{EventID: sl.EventID, Token: sl.Token})
	if errors.Is(err, pgx.ErrNoRows) {
		return db.Order{}, false, nil
	} else if err != nil {
		return db.Order{}, false, err
	}
	if row, err = q.OrderGet(ctx, id); err != nil {
		return db.Order{}, true, err
	}
	if !sl.made(row) {
		return db.Order{}, true, ErrSaleFormUsed
	}
	return row, true, nil
}

// createSaleOrder makes the order of what h holds for the sale, with its lines, for
// the total of quote (the sale's quote for its method). Outside the sales window it
// makes none: a *NotOnSaleError or ErrSalesClosed.
func createSaleOrder(ctx context.Context, q *db.Queries, sl Sale, buyer string, h Hold, quote pricing.Quote) (db.Order, error) {
	p := db.OrderCreateParams{
		EventID: sl.EventID, HoldID: h.ID.Seq, Buyer: buyer, Email: sl.Email, SeatIds: seatIDsOf(h.Seats),
		AmountCents: int32(quote.Total),
	}
	if h.GA != nil {
		p.GaTierID, p.GaQuantity = &h.GA.TierID, int32(h.GA.Quantity)
	}
	withLines(&p, quote)
	row, err := q.OrderCreate(ctx, p)
	if errors.Is(err, pgx.ErrNoRows) {
		if werr := saleWindowError(ctx, q, sl.EventID); werr != nil {
			return db.Order{}, werr
		}
	}
	return db.Order(row), err
}

// payAtBoxOffice records the money taken at the window for the order as a payment
// that succeeded, and returns the payment's provider id; nil for a free sale, which
// has no payment.
func payAtBoxOffice(ctx context.Context, q *db.Queries, row db.Order, amount int, method string) (*string, error) {
	if amount <= 0 {
		return nil, nil
	}
	pid := BoxOfficeProvider + "_" + strconv.FormatInt(row.ID, 10)
	if err := q.PaymentAtBoxOffice(ctx, db.PaymentAtBoxOfficeParams{
		OrderID: row.ID, IdempotencyKey: pid, ProviderPaymentID: &pid,
		AmountCents: int32(amount), Method: method,
	}); err != nil {
		return nil, err
	}
	return &pid, nil
}

// saleHold holds what the sale asks for in its transaction, through the statements of
// an online hold: hold_seats for picked seats, HoldCreate and the best-available or
// general-admission claim for a quantity. The limit is the sale's own size; turn is
// the best-available turn taken before the transaction (bestTurn).
func (s *store) saleHold(ctx context.Context, tx pgx.Tx, q *db.Queries, sl Sale, buyer string, turn int) (Hold, error) {
	req := sl.holdRequest(buyer)
	if len(sl.SeatIDs) == 0 {
		return s.holdPlaces(ctx, tx, q, req, sl.Quantity, turn, nil, nil)
	}
	rows, err := q.SeatsHoldExact(ctx, db.SeatsHoldExactParams{
		EventID: sl.EventID, Buyer: buyer, SeatIds: sl.SeatIDs,
		TtlSeconds: s.cfg.HoldTTL.Seconds(), BuyerLimit: int32(len(sl.SeatIDs)),
	})
	if err != nil {
		return Hold{}, err
	}
	return s.exactVerdict(ctx, req, rows)
}

// holdRequest is the hold the sale makes for buyer.
func (sl Sale) holdRequest(buyer string) HoldRequest {
	return HoldRequest{EventID: sl.EventID, Buyer: buyer, SeatIDs: sl.SeatIDs, Quantity: sl.Quantity,
		Section: sl.Section, Together: sl.Together, GATierID: sl.GATierID}
}

// made reports whether o is the order this sale would make: the same seats picked, or
// as many seats or places of the same tier.
func (sl Sale) made(o db.Order) bool {
	if len(sl.SeatIDs) > 0 {
		asked, sold := slices.Clone(sl.SeatIDs), slices.Clone(o.SeatIds)
		slices.Sort(asked)
		slices.Sort(sold)
		return slices.Equal(asked, sold)
	}
	if sl.GATierID != 0 {
		return o.GaTierID != nil && *o.GaTierID == sl.GATierID && int(o.GaQuantity) == sl.Quantity
	}
	return o.GaTierID == nil && len(o.SeatIds) == sl.Quantity
}

// BoxOfficeOrder returns an order of the event for the box office, whoever bought it,
// with what the box office recorded of its sale (nil if it was sold online).
func (s *Desk) BoxOfficeOrder(ctx context.Context, eventID, orderID int64) (Order, *SaleRecord, error) {
	row, o, err := s.orderView(ctx, orderID)
	if errors.Is(err, pgx.ErrNoRows) || (err == nil && row.EventID != eventID) {
		return Order{}, nil, ErrOrderNotFound
	} else if err != nil {
		return Order{}, nil, translate(err)
	}
	r, err := s.q.BoxOfficeSaleGet(ctx, db.BoxOfficeSaleGetParams{EventID: eventID, OrderID: orderID})
	if errors.Is(err, pgx.ErrNoRows) {
		return o, nil, nil
	} else if err != nil {
		return Order{}, nil, translate(err)
	}
	return o, &SaleRecord{Method: r.Method, BuyerName: r.BuyerName, StaffName: r.StaffName, At: r.CreatedAt}, nil
}
