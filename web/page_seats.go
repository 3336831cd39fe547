package web

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"boxoffice/internal/booking"
	"boxoffice/internal/money"
	"boxoffice/internal/ordertext"
	"boxoffice/static"
	"boxoffice/views"
)

// errNoSection answers ?section= naming no section of the event.
var errNoSection = &apiError{Status: http.StatusNotFound, Code: "section_not_found", Message: "This event has no section of that name."}

// showSeats is the seat selection page of one buyer (never cached: it shows their
// holds). To htmx it answers with the part that asked, named by HX-Target: the map
// after the live stream's reset, or the hold panel after a hold ran out.
func (s *server) showSeats(c echo.Context) error {
	ctx := c.Request().Context()
	ev, err := s.eventBySlug(ctx, c.Param("slug"))
	if err != nil {
		return err
	}
	section := c.QueryParam("section")
	varyHTMX(c)
	if isHTMX(c) {
		switch c.Request().Header.Get("HX-Target") {
		case "hold-panel":
			holds, err := s.Buyer.BuyerHolds(ctx, ev.ID, s.pageBuyer(c))
			if err != nil {
				return err
			}
			quotes, err := s.basketQuotes(ctx, holds, s.pageBuyer(c))
			if err != nil {
				return err
			}
			panel, _ := holdPanel(s.Money, ev, section, holds, quotes, buyerPage(c, "").CSRFToken, time.Now())
			return render(c, http.StatusOK, personal, views.HoldPanelView(panel, false))
		}
		p, err := s.seatsPage(c, ev, section, views.Message{})
		if err != nil {
			return err
		}
		return render(c, http.StatusOK, personal, views.SeatMapFragment(p.Map))
	}
	p, err := s.seatsPage(c, ev, section, views.Message{})
	if err != nil {
		return err
	}
	if err := s.markFound(ctx, ev, &p, c.QueryParam(pickedParam)); err != nil {
		return err
	}
	return render(c, http.StatusOK, personal, views.SeatsPageView(p))
}

// seatsPage builds the seat page of the session's buyer, saying msg, with the ask
// for a proof of work while the session has yet to prove (proof.go).
func (s *server) seatsPage(c echo.Context, ev booking.Event, section string, msg views.Message) (views.SeatsPage, error) {
	p, err := s.seatsPageFor(c.Request().Context(), ev, section, s.pageBuyer(c), buyerPage(c, "Choose seats: "+ev.Name), msg)
	if p.Proof = s.holdProof(c); p.Proof != nil {
		p.Scripts = append(p.Scripts, proofScript)
	}
	return p, err
}

// seatMapOf is the event's seat map, from the booking service's cache, with its
// summary; errNoSection when section is named and is not one of the map's.
func (s *server) seatMapOf(ctx context.Context, eventID int64, section string) (booking.SeatMap, booking.MapSummary, error) {
	m, err := s.Maps.SeatMap(ctx, eventID)
	if err != nil {
		return booking.SeatMap{}, booking.MapSummary{}, err
	}
	sum := booking.Summarize(m)
	if section != "" {
		if _, ok := sum.Section(section); !ok {
			return booking.SeatMap{}, booking.MapSummary{}, errNoSection
		}
	}
	return m, sum, nil
}

// seatsPageFor builds the seat page of a buyer ("" for none yet) in the frame p. The
// map comes from the booking service's cache; only the buyer's own holds are read
// fresh.
func (s *server) seatsPageFor(ctx context.Context, ev booking.Event, section, buyer string, p views.Page, msg views.Message) (views.SeatsPage, error) {
	m, sum, err := s.seatMapOf(ctx, ev.ID, section)
	if err != nil {
		return views.SeatsPage{}, err
	}
	holds, err := s.Buyer.BuyerHolds(ctx, ev.ID, buyer)
	if err != nil {
		return views.SeatsPage{}, err
	}
	if msg.Text == "" && len(holds) == 0 {
		msg.Text = holdWithinText(ev) // an admission holding nothing lapses (lapse.go)
	}
	now := time.Now()
	// sections.js before picked.js: it shows the section of the seats found before
	// picked.js scrolls to them.
	p.Scripts = append(p.Scripts, countdownScript, static.URL("js/seats.js"), static.URL("js/sections.js"), static.URL("js/picked.js"))
	quotes, err := s.basketQuotes(ctx, holds, buyer)
	if err != nil {
		return views.SeatsPage{}, err
	}
	prices, err := s.allInPrices(ctx, ev.ID)
	if err != nil {
		return views.SeatsPage{}, err
	}
	panel, mine := holdPanel(s.Money, ev, section, holds, quotes, p.CSRFToken, now)
	limit := s.Buyer.Config().MaxPerBuyer
	return views.SeatsPage{
		Page: p, Event: eventHeader(ev, now), StreamURL: streamURL(ev, m), PageURL: seatsURL(ev, section),
		Message: msg, Holds: panel,
		Best:   bestForm(s.Money, ev, sum, section, p.CSRFToken, limit),
		GA:     gaForms(s.Money, ev, m, p.CSRFToken, limit, prices),
		Legend: legend(s.Money, sum, prices),
		Map:    seatMapView(mapArgs{ev: ev, m: m, sum: sum, section: section, style: seatStyle{mine: mine, prices: prices, money: s.Money}, csrf: p.CSRFToken}),
	}, nil
}

// streamURL is the live stream of the event's seat changes, starting after the
// version of the map the page shows, so that nothing between the two is missed.
func streamURL(ev booking.Event, m booking.SeatMap) string {
	return "/events/" + ev.Slug + "/stream?v=" + strconv.FormatInt(m.Version, 10)
}

func holdsURL(ev booking.Event) string { return "/events/" + ev.Slug + "/holds" }

// holdPanel shows the buyer's basket and any holds whose checkout has begun, priced
// by quotes (a hold without one shows its seats' own prices), and returns which seats
// are theirs.
func holdPanel(shop money.Shop, ev booking.Event, section string, holds []booking.Hold, quotes map[booking.HoldID]booking.BasketQuote, csrf string, now time.Time) (views.HoldPanel, map[int64]bool) {
	ids, mine := mineIDs(holds)
	p := views.HoldPanel{URL: seatsURL(ev, section), MineIDs: ids, CSRF: csrf}
	for _, h := range holds {
		hv := views.HoldView{
			ID:            h.ID.String(),
			ExpiresAt:     h.ExpiresAt.UTC().Format(time.RFC3339),
			ExpiresText:   expiryText(h.ExpiresAt, ev.Zone, now),
			CheckoutURL:   "/holds/" + h.ID.String() + "/checkout",
			ReleaseURL:    "/holds/" + h.ID.String() + "/release",
			CheckoutBegun: h.CheckoutBegun,
		}
		bq, priced := quotes[h.ID]
		total := 0
		for _, st := range h.Seats {
			l := views.HoldLine{What: ordertext.SeatLabel(st), Price: shop.Short(st.PriceCents)}
			if !h.CheckoutBegun {
				l.RemoveURL = removeSeatURL(h.ID, st.ID)
			}
			if priced {
				pricedSeatLine(shop, &l, h, bq, st.ID) // page_basketprice.go
			}
			hv.Lines = append(hv.Lines, l)
			total += st.PriceCents
		}
		if h.GA != nil && priced && bq.Problem == nil {
			hv.Lines = append(hv.Lines, pricedGALines(shop, h, bq)...)
		} else if h.GA != nil {
			cents := h.GA.Quantity * h.GA.PriceCents
			hv.Lines = append(hv.Lines, views.HoldLine{What: fmt.Sprintf("%d × %s (general admission)", h.GA.Quantity, h.GA.TierName), Price: shop.Short(cents)})
			total += cents
		}
		hv.Total = shop.Short(total)
		if priced {
			hv.Price, hv.GATypes = basketPrice(shop, h, bq), gaTypeForm(shop, h, bq)
			if hv.Total = shop.Short(int(bq.Total)); bq.Problem != nil {
				hv.Total = "not yet: see above"
			}
		}
		p.Holds = append(p.Holds, hv)
	}
	return p, mine
}

func bestForm(shop money.Shop, ev booking.Event, sum booking.MapSummary, section, csrf string, limit int) views.BestForm {
	f := views.BestForm{Action: holdsURL(ev), CSRF: csrf}
	for n := 1; n <= limit; n++ {
		label := strconv.Itoa(n) + " seats"
		if n == 1 {
			label = "1 seat"
		}
		f.Quantities = append(f.Quantities, views.Option{Value: strconv.Itoa(n), Label: label, Selected: n == min(2, limit)})
	}
	if len(sum.Prices) > 1 {
		f.Prices = append(f.Prices, views.Option{Value: "", Label: "any price", Selected: true})
		for _, p := range sum.Prices {
			f.Prices = append(f.Prices, views.Option{Value: strconv.Itoa(p.PriceCents), Label: shop.Short(p.PriceCents)})
		}
	}
	if len(sum.Sections) > 1 {
		f.Sections = append(f.Sections, views.Option{Value: "", Label: "any section", Selected: section == ""})
		for _, sec := range sum.Sections {
			f.Sections = append(f.Sections, views.Option{Value: sec.Name, Label: sec.Name, Selected: sec.Name == section})
		}
	}
	return f
}

func gaForms(shop money.Shop, ev booking.Event, m booking.SeatMap, csrf string, limit int, prices booking.AllInPrices) []views.GAForm {
	var out []views.GAForm
	for _, t := range m.GATiers {
		id := strconv.FormatInt(t.ID, 10)
		out = append(out, views.GAForm{
			Action: holdsURL(ev), CSRF: csrf, TierID: id,
			Name: t.Name + " (general admission)", Price: gaPriceText(shop, t, prices), Left: leftText(t.Remaining),
			Max: max(0, min(limit, t.Remaining)), InputID: "ga-qty-" + id, LeftID: "ga-left-" + id,
		})
	}
	return out
}

func legend(shop money.Shop, sum booking.MapSummary, prices booking.AllInPrices) views.Legend {
	var l views.Legend
	colour := priceClasses(sum)
	for _, p := range sum.Prices {
		l.Prices = append(l.Prices, views.LegendPrice{Class: colour[p.PriceCents], Price: allInText(shop, prices.Seat(p.PriceCents), prices)})
	}
	return l
}

// seatFragments renders seats in their current state, from the seat map cache, each
// marked to replace the element of its id out of band (views.SeatsOOB): what the live
// stream sends for every batch of changed seats. It shows the public state only (a seat
// is held, not "yours"): one rendering serves every viewer of the batch, and the page's
// script marks the viewer's own seats again.
func (s *server) seatFragments(ctx context.Context, eventID int64, seatIDs []int64, ga bool) ([]byte, error) {
	m, err := s.Maps.SeatMapSeats(ctx, eventID, seatIDs)
	if err != nil {
		return nil, err
	}
	prices, err := s.allInPrices(ctx, eventID)
	if err != nil {
		return nil, err
	}
	seats := make([]views.SeatView, len(m.Seats))
	for i, st := range m.Seats {
		seats[i] = seatView(st, st.Status, seatStyle{prices: prices, money: s.Money})
	}
	var buf bytes.Buffer
	if err := views.SeatsOOB(seats).Render(ctx, &buf); err != nil {
		return nil, err
	}
	if ga {
		// The places left of each tier, by the ids the page gives them (gaForms).
		left := make([]views.GAForm, len(m.GATiers))
		for i, t := range m.GATiers {
			left[i] = views.GAForm{LeftID: "ga-left-" + strconv.FormatInt(t.ID, 10), Left: leftText(t.Remaining)}
		}
		if err := views.GALeftOOB(left).Render(ctx, &buf); err != nil {
			return nil, err
		}
	}
	return buf.Bytes(), nil
}
