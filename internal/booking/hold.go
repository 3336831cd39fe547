package booking

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"boxoffice/internal/db"
	"boxoffice/internal/dbgate"
)

// Hold keeps seats or places for a buyer until the hold expires, and counts the
// verdict (counters.go).
func (s *Buyer) Hold(ctx context.Context, req HoldRequest) (Hold, error) {
	return s.counted(s.hold(ctx, req, false))
}

// counted counts a hold's verdict (counters.go).
func (s *Buyer) counted(h Hold, err error) (Hold, error) {
	if s.counters != nil {
		switch {
		case err == nil:
			s.counters.HoldCreated()
		case isConflict(err):
			s.counters.HoldConflict()
		}
	}
	return h, err
}

// hold is Hold before it is counted: it keeps seats or places for a buyer until the hold
// expires. Exact seats are all or nothing: if any is taken, nothing is held and the
// error names the taken seats. Outside the event's sales window nothing is held: a
// *NotOnSaleError or ErrSalesClosed, decided by the database clock in the claiming
// statement. A request CheckHold refuses holds nothing: an *InvalidError. With
// joinBasket, exact seats are not held if the buyer has a basket on the event
// (errHasBasket): they join it instead (HoldOrAdd).
func (s *store) hold(ctx context.Context, req HoldRequest, joinBasket bool) (Hold, error) {
	if req.Buyer == "" {
		return Hold{}, errors.New("hold without a buyer")
	}
	if err := s.checkHold(req); err != nil {
		return Hold{}, err
	}
	// A hold is the step a buyer waits on with the seat map in front of them: its
	// statements go first in the queue for a connection (the exact holds' batches too).
	ctx = dbgate.First(ctx)
	arrived := time.Now()
	kind := req.Kind()
	best := kind == HoldKindBest
	switch kind {
	case HoldKindSeats:
		return s.holdExact(ctx, req, joinBasket)
	case HoldKindBest:
		if h, err := s.holdFromMap(ctx, req); !errors.Is(err, errNoMapChoice) {
			return h, err
		}
	}
	// Only best available waits for a turn (waitTurn), and takes the verdicts of the
	// searches begun since it arrived.
	turn, done, soldOut, err := s.waitTurn(ctx, req, arrived)
	if err != nil {
		return Hold{}, err
	}
	if soldOut {
		// A search that started after this request arrived found nothing for such a
		// party: the database's word, given while this buyer waited for the turn.
		s.soldOutShared.Add(1)
		return Hold{}, ErrSoldOut
	}
	defer done()
	searched := time.Now()
	left := -1
	h, err := s.holdPlacesTx(ctx, req, turn, nil, &left)
	switch {
	case best && errors.Is(err, ErrSoldOut):
		s.soldOut.note(req, searched)
	case best && err == nil && left >= 0:
		// The search saw every free seat for such a request and left fewer than
		// left+1 once its own were claimed: no party of left+1 or more, together or
		// not, can be seated (at the sell-out, most of the holds waiting for a turn).
		s.soldOut.note(HoldRequest{EventID: req.EventID, Section: req.Section, PriceCents: req.PriceCents, Quantity: left + 1}, searched)
	}
	return h, err
}

// holdPlacesTx is holdPlaces in a transaction of its own, announced once committed.
// left is as holdPlaces sets it (by the transaction's last try); it says something
// only when no error is returned.
func (s *store) holdPlacesTx(ctx context.Context, req HoldRequest, turn int, chosen []int64, left *int) (Hold, error) {
	var h Hold
	err := s.inTx(ctx, func(tx pgx.Tx, q *db.Queries) error {
		var err error
		h, err = s.holdPlaces(ctx, tx, q, req, s.cfg.MaxPerBuyer, turn, chosen, left)
		return err
	})
	if err != nil {
		return Hold{}, err
	}
	s.announce(ctx, req.EventID, seatIDsOf(h.Seats))
	if h.GA != nil {
		s.announceGA(ctx, req.EventID)
	}
	return h, nil
}

// errNoMapChoice: best available's quick way held nothing (holdFromMap); the turn's
// search decides.
var errNoMapChoice = errors.New("booking: no choice from the seat map")

// holdFromMap is best available's quick way: the map's best choice for the party that
// no other hold of this process is claiming (chooseFromMap), claimed in a transaction
// of its own without waiting for a turn. Choices made at the same moment are disjoint,
// and the claim is the conditional statement as ever, so the turns (bestTurn) are left
// to the searches that need them: a map that cannot be used or shows nothing, or a
// choice someone else took. errNoMapChoice: nothing was held, try the turn.
func (s *store) holdFromMap(ctx context.Context, req HoldRequest) (Hold, error) {
	ids, release := s.chooseFromMap(req)
	if ids == nil {
		return Hold{}, errNoMapChoice
	}
	defer release() // after the announcement, which notes the seats as changed
	h, err := s.holdPlacesTx(ctx, req, 0, ids, nil)
	if err == nil {
		s.bestFromMap.Add(1)
	}
	return h, err
}

// holdPlaces holds best-available seats or general-admission places in the caller's
// transaction, the buyer staying within limit: the hold row first (HoldCreate, which
// carries the sales window and the limit), then the claim. turn is the best-available
// turn the caller took before the transaction (bestTurn); chosen, when not nil, the
// seats chosen from the map without a turn (holdFromMap), claimed as they are or not
// at all (errNoMapChoice). left, if not nil, is set when best available's search
// chose the seats: to the free seats it saw left after its claim, or -1 (holdBest).
func (s *store) holdPlaces(ctx context.Context, tx pgx.Tx, q *db.Queries, req HoldRequest, limit, turn int, chosen []int64, left *int) (Hold, error) {
	client, clientLimit := s.client(req)
	p := db.HoldCreateParams{
		EventID: req.EventID, Buyer: req.Buyer,
		TtlSeconds: s.cfg.HoldTTL.Seconds(), BuyerLimit: int32(limit),
		ClientKey: client, ClientLimit: clientLimit, CodeID: req.AccessCode,
	}
	if req.GATierID != 0 {
		p.GaTierID, p.GaQuantity = &req.GATierID, int32(req.Quantity)
	} else {
		p.SeatCount = int32(req.Quantity)
	}
	// One round trip: the network's lock, the access code's and the buyer's, the tier,
	// then the hold row (after the locks, so that its counts include every earlier
	// request). A hold made for a tier that is not there is rolled back with the
	// transaction.
	var pl db.Pipeline
	if clientLimit > 0 {
		pl.ClientLock(db.ClientLockParams{ClientKey: client, EventID: req.EventID})
	}
	if req.AccessCode != 0 {
		pl.CodeLock(db.CodeLockParams{EventID: req.EventID, CodeID: req.AccessCode})
	}
	pl.BuyerLock(db.BuyerLockParams{Buyer: req.Buyer, EventID: req.EventID})
	var tierRow *db.Row[db.GATierGetRow]
	if req.GATierID != 0 {
		tierRow = pl.GATierGet(db.GATierGetParams{EventID: req.EventID, ID: req.GATierID})
	}
	created := pl.HoldCreate(p)
	if err := pl.Send(ctx, tx); err != nil {
		if isForeignKeyViolation(err) {
			return Hold{}, ErrEventNotFound
		}
		return Hold{}, err
	}
	var tier db.GATierGetRow
	if tierRow != nil {
		if !tierRow.Found {
			return Hold{}, s.missingEventOr(ctx, req.EventID, ErrGATierNotFound)
		}
		tier = tierRow.Val
	}
	row := created.Val
	if !created.Found {
		return Hold{}, errors.New("HoldCreate answered nothing")
	}
	if err := s.refusal(row.Verdict, row.ExpiresAt, int(row.Held), limit); err != nil {
		return Hold{}, err
	}
	var err error
	h := Hold{ID: HoldID{Event: req.EventID, Seq: row.ID}, ExpiresAt: row.ExpiresAt}
	if req.GATierID != 0 {
		if err := s.takeGA(ctx, tx, q, req.EventID, row.ID, tier.ID, int(tier.Stripes), req.Quantity); err != nil {
			return Hold{}, err
		}
		h.GA = &GAPlaces{TierID: tier.ID, TierName: tier.Name, Quantity: req.Quantity, PriceCents: int(tier.PriceCents)}
		return h, nil
	}
	if chosen != nil {
		h.Seats, err = s.claim(ctx, tx, req.EventID, chosen, row, false)
		if err == nil && h.Seats == nil {
			// Taken, or being taken by another instance: the map is behind on it.
			s.mapMissed(req.EventID, chosen)
			err = errNoMapChoice
		}
		return h, err
	}
	var seen int
	h.Seats, seen, err = s.holdBest(ctx, tx, q, req, row, turn)
	if left != nil {
		*left = seen
	}
	return h, err
}

// refusal is the error that says why a holding statement (hold_seats, HoldCreate)
// held nothing, read from its status: the sales window, the buyer's limit or the
// client network's; nil for 'held'. at and held are the statement's expires_at and
// held, which say when the sale opens or the network's first hold lapses, and what the
// buyer or the network has. limit is the buyer limit the statement was given.
func (s *store) refusal(status string, at time.Time, held, limit int) error {
	switch status {
	case "held":
		return nil
	case "unknown":
		return ErrEventNotFound
	case "not_on_sale":
		return &NotOnSaleError{OnsaleAt: at}
	case "closed":
		return ErrSalesClosed
	case "presale_quota":
		return ErrPresaleQuota
	case "limit":
		return &LimitError{Limit: limit, Held: held}
	case "client_limit":
		return &ClientLimitError{Limit: s.cfg.MaxHeldPerClient, Held: held, NextFree: at}
	}
	return fmt.Errorf("the hold answered %q", status)
}

// client is the request's network and its limit of places held at once, or nothing
// when the limit is off.
func (s *store) client(req HoldRequest) (string, int32) {
	if s.cfg.MaxHeldPerClient <= 0 || req.Client == "" {
		return "", 0
	}
	return req.Client, int32(s.cfg.MaxHeldPerClient)
}

// holdExact holds exactly the asked-for seats, all or nothing, in one call of the
// hold_seats function, batched with the holds arriving at the same moment (batch.go):
// the path an onsale hammers costs one round trip and a share of one commit. If any seat is
// taken nothing is held and the error names the taken seats. With joinBasket a buyer
// who has a basket on the event holds nothing here: errHasBasket, found by the same
// statement under the buyer's lock.
func (s *store) holdExact(ctx context.Context, req HoldRequest, joinBasket bool) (Hold, error) {
	client, clientLimit := s.client(req)
	rows, err := s.holdExactRows(ctx, db.SeatsHoldExactParams{
		EventID: req.EventID, Buyer: req.Buyer, SeatIds: req.SeatIDs,
		TtlSeconds: s.cfg.HoldTTL.Seconds(), BuyerLimit: int32(s.cfg.MaxPerBuyer),
		ClientKey: client, ClientLimit: clientLimit, CodeID: req.AccessCode, JoinBasket: joinBasket,
	})
	if err != nil {
		return Hold{}, err
	}
	h, err := s.exactVerdict(ctx, req, rows)
	if err != nil {
		return Hold{}, err
	}
	s.announce(ctx, req.EventID, seatIDsOf(h.Seats))
	return h, nil
}

// exactVerdict reads hold_seats' answer: the hold, or the error that says why nothing
// was held.
func (s *store) exactVerdict(ctx context.Context, req HoldRequest, rows []db.SeatsHoldExactRow) (Hold, error) {
	if len(rows) == 0 {
		return Hold{}, errors.New("hold_seats answered nothing")
	}
	var ids []int64
	for _, r := range rows {
		ids = append(ids, r.SeatID)
	}
	switch rows[0].Status {
	case "unknown": // hold_seats' unknown are seats
		return Hold{}, s.missingEventOr(ctx, req.EventID, &UnknownSeatsError{SeatIDs: ids})
	case "taken":
		return Hold{}, &SeatsUnavailableError{SeatIDs: ids}
	case "basket":
		return Hold{}, errHasBasket
	}
	if err := s.refusal(rows[0].Status, rows[0].ExpiresAt, int(rows[0].Held), s.cfg.MaxPerBuyer); err != nil {
		return Hold{}, err
	}
	h := Hold{ID: HoldID{Event: req.EventID, Seq: rows[0].HoldID}, ExpiresAt: rows[0].ExpiresAt}
	for _, r := range rows {
		h.Seats = append(h.Seats, Seat{ID: r.SeatID, Section: r.Section, Row: r.RowLabel, Number: int(r.Number), PriceCents: int(r.PriceCents)})
	}
	slices.SortFunc(h.Seats, func(a, b Seat) int { return cmp.Compare(a.ID, b.ID) })
	return h, nil
}

func seatIDsOf(seats []Seat) []int64 {
	ids := make([]int64, len(seats))
	for i, st := range seats {
		ids[i] = st.ID
	}
	return ids
}

// missingEventOr tells an unknown event from an unknown seat or tier of a known one.
func (s *store) missingEventOr(ctx context.Context, eventID int64, err error) error {
	if _, e := s.q.EventGet(ctx, eventID); errors.Is(e, pgx.ErrNoRows) {
		return ErrEventNotFound
	} else if e != nil {
		return e
	}
	return err
}

// Release gives a hold's seats and places back at once. Releasing a hold that is
// already released or lapsed succeeds; a sold hold cannot be released.
func (s *Buyer) Release(ctx context.Context, id HoldID, buyer string) error {
	var freed []int64
	ga := false
	err := s.inTx(ctx, func(tx pgx.Tx, q *db.Queries) error {
		h, err := q.HoldLock(ctx, db.HoldLockParams{EventID: id.Event, ID: id.Seq})
		if errors.Is(err, pgx.ErrNoRows) || (err == nil && h.Buyer != buyer) {
			return ErrHoldNotFound
		} else if err != nil {
			return err
		}
		if h.SoldAt != nil {
			return fmt.Errorf("%w: hold %s is sold", ErrOrderNotPending, id)
		}
		if h.ReleasedAt != nil {
			return nil
		}
		ga = h.GaQuantity > 0
		freed, err = s.releaseLocked(ctx, q, id, ga)
		return err
	})
	if err != nil {
		return err
	}
	s.announce(ctx, id.Event, freed)
	if ga {
		s.announceGA(ctx, id.Event)
	}
	return nil
}

// releaseLocked gives back the seats (and, with ga, the places) of a hold the caller
// has locked, by the conditional release, and marks it released. It returns the seats
// freed, for the caller to announce after commit.
func (s *store) releaseLocked(ctx context.Context, q *db.Queries, id HoldID, ga bool) ([]int64, error) {
	freed, err := q.SeatRelease(ctx, db.SeatReleaseParams{EventID: id.Event, HoldID: &id.Seq})
	if err != nil {
		return nil, err
	}
	if ga {
		if err := s.giveBackGA(ctx, q, id.Event, id.Seq); err != nil {
			return nil, err
		}
	}
	_, err = q.HoldMarkReleased(ctx, db.HoldMarkReleasedParams{EventID: id.Event, ID: id.Seq})
	return freed, err
}

// GetHold returns a live hold of the buyer; a lapsed or released one is ErrHoldExpired.
// It reads the hold and its seats in one round trip (PricedHold's read).
func (s *Buyer) GetHold(ctx context.Context, id HoldID, buyer string) (Hold, error) {
	r, err := s.readBasket(ctx, id, buyer)
	if err != nil {
		return Hold{}, err
	}
	return r.hold(), nil
}

// seatFields is the shape of every seat row the queries return for a buyer.
type seatFields = struct {
	ID         int64
	Section    string
	RowLabel   string
	Number     int32
	PriceCents int32
}

// seatsOf maps any of the queries' seat rows to Seats.
func seatsOf[R ~seatFields](rows []R) []Seat {
	seats := make([]Seat, len(rows))
	for i, r := range rows {
		f := seatFields(r)
		seats[i] = Seat{ID: f.ID, Section: f.Section, Row: f.RowLabel, Number: int(f.Number), PriceCents: int(f.PriceCents)}
	}
	return seats
}
