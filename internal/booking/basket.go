package booking

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"boxoffice/internal/db"
	"boxoffice/internal/dbgate"
)

// The buyer's basket is one live hold per buyer and event that grows and shrinks until
// its checkout begins: seats join it with its expiry (adding never extends a hold),
// under the same limits as a new hold, and leave it one at a time. Once an order
// names the hold it is fixed, so that the order's amount is always what is sold. The
// statements are in migrations/functions/hold_basket.sql.

var (
	// ErrCheckoutBegun means the hold has an order already: its seats are fixed, and
	// what the buyer adds goes into a new basket.
	ErrCheckoutBegun = errors.New("checkout has begun for this hold")
	// ErrSeatNotInHold means the hold does not hold that seat (any more).
	ErrSeatNotInHold = errors.New("that seat is not in this hold")
	// ErrOtherTier means the basket has standing places of another area: a hold, and
	// so an order, has places of one standing area.
	ErrOtherTier = errors.New("a basket has places of one standing area")
)

// basketStatus is the error for a status of hold_basket_lock; nil for any other.
func basketStatus(status string) error {
	switch status {
	case "not_found":
		return ErrHoldNotFound
	case "expired":
		return ErrHoldExpired
	case "checkout_begun":
		return ErrCheckoutBegun
	case "not_in_hold":
		return ErrSeatNotInHold
	case "other_tier":
		return ErrOtherTier
	}
	return nil
}

// Basket returns the buyer's basket on the event: their newest live hold without an
// order, with what it holds; found false when they have none.
func (s *Buyer) Basket(ctx context.Context, eventID int64, buyer string) (Hold, bool, error) {
	if buyer == "" {
		return Hold{}, false, nil
	}
	row, err := s.q.BasketOfBuyer(ctx, db.BasketOfBuyerParams{EventID: eventID, Buyer: buyer})
	if errors.Is(err, pgx.ErrNoRows) {
		return Hold{}, false, nil
	} else if err != nil {
		return Hold{}, false, translate(err)
	}
	h, err := s.GetHold(ctx, HoldID{Event: eventID, Seq: row.ID}, buyer)
	if errors.Is(err, ErrHoldExpired) {
		return Hold{}, false, nil // lapsed between the two reads
	}
	return h, err == nil, err
}

// AddToBasket adds what req asks for to the buyer's basket on req.EventID, or opens
// the basket with it when they have none, and returns the basket. Exact seats join in
// one statement (hold_add_seats), all or nothing. Best available and standing places
// are held as a hold of their own, by Hold's rules, which is then folded into the
// basket (hold_merge); if the basket cannot take them (its checkout began meanwhile,
// it lapsed) they stay a hold of their own, which is then the basket. The answer's
// Added names the seats this call added.
func (s *Buyer) AddToBasket(ctx context.Context, req HoldRequest) (Hold, error) {
	if req.Kind() == HoldKindSeats {
		return s.addSeats(ctx, req, 0)
	}
	basket, found, err := s.Basket(ctx, req.EventID, req.Buyer)
	if err != nil {
		return Hold{}, err
	}
	if found && req.GATierID != 0 && basket.GA != nil && basket.GA.TierID != req.GATierID {
		return Hold{}, ErrOtherTier
	}
	h, err := s.Hold(ctx, req)
	if err != nil {
		return h, err
	}
	h.Added = h.Seats
	if !found {
		return h, nil
	}
	m, err := s.q.BasketMerge(ctx, db.BasketMergeParams{EventID: req.EventID, Buyer: req.Buyer, IntoID: basket.ID.Seq, FromID: h.ID.Seq})
	if err != nil {
		return Hold{}, translate(err)
	}
	if m.Status != "merged" {
		return h, nil
	}
	s.announce(ctx, req.EventID, m.Moved)
	merged, err := s.GetHold(ctx, basket.ID, req.Buyer)
	if err != nil {
		return Hold{}, err
	}
	merged.Added = h.Added
	return merged, nil
}

// HoldOrAdd is the API's hold call: what req asks for joins the buyer's basket on the
// event when they have one (AddToBasket: the same hold, its expiry kept), and
// otherwise opens it by Hold's own path, where an onsale's exact holds are batched
// with other buyers'. Exact seats ask for the basket in their holding statement,
// after the buyer's lock (hold_seats' 'basket', which holds nothing), so the first
// hold of a buyer costs no read of its own and a second call of the same buyer at the
// same instant joins the first's hold. Best available and standing places look for
// the basket by one indexed read first; two first calls of one buyer at the same
// instant may then each open a hold, and the buyer limit still counts them together.
// (The seat page's AddToBasket opens a basket under the buyer's basket lock instead,
// unbatched.)
func (s *Buyer) HoldOrAdd(ctx context.Context, req HoldRequest) (Hold, error) {
	if req.Buyer == "" {
		return Hold{}, errors.New("hold without a buyer")
	}
	ctx = dbgate.First(ctx)
	if req.Kind() == HoldKindSeats {
		h, err := s.counted(s.hold(ctx, req, true))
		if errors.Is(err, errHasBasket) {
			return s.AddToBasket(ctx, req)
		}
		return h, err
	}
	_, err := s.q.BasketOfBuyer(ctx, db.BasketOfBuyerParams{EventID: req.EventID, Buyer: req.Buyer})
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return s.Hold(ctx, req)
	case err != nil:
		return Hold{}, translate(err)
	}
	return s.AddToBasket(ctx, req)
}

// errHasBasket: the buyer has a basket on the event, so a hold call's exact seats were
// not held as a hold of their own; they join the basket (HoldOrAdd).
var errHasBasket = errors.New("booking: the buyer has a basket on the event")

// AddSeats adds exact seats to the buyer's hold id, all or nothing, within the
// buyer's and the client network's limits, and returns the hold. It refuses a hold
// that is not the buyer's (ErrHoldNotFound), not live (ErrHoldExpired) or whose
// checkout has begun (ErrCheckoutBegun); seats someone else has are a
// *SeatsUnavailableError, and nothing is added.
func (s *Buyer) AddSeats(ctx context.Context, id HoldID, req HoldRequest) (Hold, error) {
	if id.Seq <= 0 {
		return Hold{}, ErrHoldNotFound
	}
	req.EventID = id.Event
	return s.addSeats(ctx, req, id.Seq)
}

// addSeats runs hold_add_seats for hold seq (0: the basket) and reads its answer.
func (s *store) addSeats(ctx context.Context, req HoldRequest, seq int64) (Hold, error) {
	if req.Buyer == "" {
		return Hold{}, errors.New("hold without a buyer")
	}
	if req.Kind() != HoldKindSeats {
		return Hold{}, invalidHold("invalid_request", "only seats by their ids can be added to a hold this way")
	}
	if err := s.checkHold(req); err != nil {
		return Hold{}, err
	}
	ctx = dbgate.First(ctx)
	client, clientLimit := s.client(req)
	rows, err := s.q.BasketAddSeats(ctx, db.BasketAddSeatsParams{
		EventID: req.EventID, Buyer: req.Buyer, HoldID: seq, SeatIds: req.SeatIDs,
		TtlSeconds: s.cfg.HoldTTL.Seconds(), BuyerLimit: int32(s.cfg.MaxPerBuyer),
		ClientKey: client, ClientLimit: clientLimit, CodeID: req.AccessCode,
	})
	if err != nil {
		return Hold{}, translate(err)
	}
	if len(rows) == 0 {
		return Hold{}, errors.New("hold_add_seats answered nothing")
	}
	if err := basketStatus(rows[0].Status); err != nil {
		return Hold{}, err
	}
	exact := make([]db.SeatsHoldExactRow, len(rows))
	for i, r := range rows {
		exact[i] = db.SeatsHoldExactRow(r)
	}
	added, err := s.exactVerdict(ctx, req, exact)
	if err != nil {
		return Hold{}, err
	}
	s.announce(ctx, req.EventID, seatIDsOf(added.Seats))
	h, err := (&Buyer{s}).GetHold(ctx, added.ID, req.Buyer)
	if err != nil {
		return Hold{}, err
	}
	h.Added = added.Seats
	return h, nil
}

// RemoveSeat frees one seat of the buyer's hold id, and only that seat, while the
// hold's checkout has not begun. A hold left with nothing is released: released says
// so. The freed seat is announced to the live maps.
func (s *Buyer) RemoveSeat(ctx context.Context, id HoldID, buyer string, seatID int64) (released bool, err error) {
	if buyer == "" {
		return false, ErrHoldNotFound
	}
	r, err := s.q.BasketRemoveSeat(ctx, db.BasketRemoveSeatParams{EventID: id.Event, Buyer: buyer, HoldID: id.Seq, SeatID: seatID})
	if err != nil {
		return false, translate(err)
	}
	if err := basketStatus(r.Status); err != nil {
		return false, err
	}
	if r.Status != "removed" {
		return false, fmt.Errorf("hold_remove_seat answered %q", r.Status)
	}
	s.announce(ctx, id.Event, []int64{seatID})
	return r.SeatCount == 0 && r.GaQuantity == 0, nil
}
