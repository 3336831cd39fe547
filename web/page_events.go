package web

import (
	"fmt"
	"math"
	"net/http"
	"net/url"
	"time"

	"github.com/labstack/echo/v4"

	"boxoffice/internal/booking"
	"boxoffice/internal/money"
	"boxoffice/internal/ordertext"
	"boxoffice/internal/zone"
	"boxoffice/views"
)

// eventPageCache lets the CDN keep an event page only briefly: availability is on it.
// A viewer may see counts ten seconds old, never a wrong sale: holds decide against the
// database. No stale-while-revalidate: staff change events (name, times, withdrawal),
// and a CDN that honours it may serve the old page past s-maxage to whoever comes
// first after it (docs/CDN.md).
const eventPageCache = "public, max-age=5, s-maxage=10"

// home lists the upcoming events. Public: no session, nothing about the viewer.
func (s *server) home(c echo.Context) error {
	events, err := s.Buyer.Events(c.Request().Context())
	if err != nil {
		return err
	}
	now := time.Now()
	h := views.Home{Page: page("On sale")}
	for _, e := range events {
		if e.StartsAt.Before(now) {
			continue
		}
		h.Events = append(h.Events, views.EventCard{
			Name: e.Name, Venue: e.Venue, When: ordertext.When(e),
			OnSale: onSaleText(e, now), URL: eventURL(e),
		})
	}
	return render(c, http.StatusOK, publicPage, views.HomePage(h))
}

// showEvent is the public page of one event: venue, date, prices, availability by
// section and the way in. With HX-Request it answers with the availability alone,
// which the page refreshes; the CDN keeps the two apart by Vary.
func (s *server) showEvent(c echo.Context) error {
	ctx := c.Request().Context()
	ev, err := s.eventBySlug(ctx, c.Param("slug"))
	if err != nil {
		return err
	}
	m, err := s.Maps.SeatMap(ctx, ev.ID)
	if err != nil {
		return err
	}
	prices, err := s.allInPrices(ctx, ev.ID)
	if err != nil {
		return err
	}
	av := availability(s.Money, ev, m, booking.Summarize(m), prices)
	varyHTMX(c)
	if isHTMX(c) {
		return render(c, http.StatusOK, eventPageCache, views.AvailabilityView(av))
	}
	p := page(ev.Name)
	p.Description = fmt.Sprintf("%s at %s, %s.", ev.Name, ev.Venue, ordertext.When(ev))
	now := time.Now()
	codeLink := ""
	if ev.OnsaleAt.After(now) {
		p.Scripts = append(p.Scripts, countdownScript)
		codeLink = codeURL(ev)
	}
	return render(c, http.StatusOK, eventPageCache, views.EventPageView(views.EventPage{
		Page: p, Event: eventHeader(ev, now), Availability: av, WayIn: wayIn(ev), Onsale: onsaleCountdown(ev, now),
		CodeURL: codeLink,
	}))
}

// wayIn is the event page's way to the seats: through the waiting room's front door
// while the event's room is on (before the onsale too: the pre-queue), straight
// otherwise.
func wayIn(ev booking.Event) views.ActionLink {
	if ev.VerifiedOnly { // the registration page leads on once the email is confirmed
		return views.ActionLink{Href: verifyURL(ev), Text: "Confirm your email to buy"}
	}
	if ev.QueueEnabled {
		return views.ActionLink{Href: wayInURL(ev), Text: "Join the queue"}
	}
	return views.ActionLink{Href: seatsURL(ev, ""), Text: "Choose seats"}
}

// onsaleCountdown counts down to an onsale ahead. The page is public and cached for
// seconds, so it says the same to everyone, in minutes.
func onsaleCountdown(ev booking.Event, now time.Time) views.Countdown {
	if !ev.OnsaleAt.After(now) {
		return views.Countdown{}
	}
	return views.Countdown{At: ev.OnsaleAt.UTC().Format(time.RFC3339), In: untilText(ev.OnsaleAt.Sub(now))}
}

// untilText says how far ahead a moment is, as people say it: "in 5 minutes".
func untilText(d time.Duration) string {
	switch {
	case d < time.Minute:
		return "in less than a minute"
	case d < time.Hour:
		return "in " + countOf(int(math.Ceil(d.Minutes())), "minute")
	case d < 48*time.Hour:
		h, m := int(d/time.Hour), int(d%time.Hour/time.Minute)
		if m == 0 {
			return "in " + countOf(h, "hour")
		}
		return "in " + countOf(h, "hour") + " " + countOf(m, "minute")
	}
	return "in " + countOf(int(d/(24*time.Hour)), "day")
}

// allInText is a first price as buyers see it: all in, with the per-order fee beside
// it as prominently (package pricing's doc).
func allInText(shop money.Shop, cents int, prices booking.AllInPrices) string {
	s := shop.Short(cents)
	if prices.Fees {
		s += " incl. fees"
	}
	if prices.OrderFee > 0 {
		s += " + " + shop.Short(prices.OrderFee) + " per order"
	}
	return s
}

func availability(shop money.Shop, ev booking.Event, m booking.SeatMap, sum booking.MapSummary, prices booking.AllInPrices) views.Availability {
	av := views.Availability{URL: eventURL(ev)}
	left := sum.Available
	for _, p := range sum.Prices {
		av.Prices = append(av.Prices, views.PriceLine{Price: allInText(shop, prices.Seat(p.PriceCents), prices), Left: leftText(p.Available)})
	}
	for _, t := range m.GATiers {
		av.GA = append(av.GA, views.GALine{Name: t.Name + " (general admission)", Price: allInText(shop, prices.GA(t.ID, t.PriceCents), prices), Left: leftText(t.Remaining)})
		left += t.Remaining
	}
	for _, sec := range sum.Sections {
		av.Sections = append(av.Sections, views.SectionLine{
			Name: sec.Name, Prices: priceRange(shop, prices.Seat(sec.MinPriceCents), prices.Seat(sec.MaxPriceCents)),
			Left:      fmt.Sprintf("%s of %s left", ordertext.Thousands(sec.Available), ordertext.Thousands(sec.Seats)),
			Available: sec.Available, Seats: sec.Seats,
		})
	}
	av.SoldOut = left == 0
	av.Summary = fmt.Sprintf("%s of %s seats left", ordertext.Thousands(sum.Available), ordertext.Thousands(sum.Seats))
	if len(m.GATiers) > 0 {
		ga := 0
		for _, t := range m.GATiers {
			ga += t.Remaining
		}
		av.Summary += fmt.Sprintf(", and %s standing places", ordertext.Thousands(ga))
	}
	av.Summary += "."
	return av
}

func eventHeader(ev booking.Event, now time.Time) views.EventHeader {
	return views.EventHeader{
		Name: ev.Name, Venue: ev.Venue, When: ordertext.When(ev), OnSale: onSaleText(ev, now),
		URL: eventURL(ev), SeatsURL: seatsURL(ev, ""),
	}
}

func eventURL(ev booking.Event) string { return "/events/" + ev.Slug }

// seatsURL is the seat page of an event, or of one section of it.
func seatsURL(ev booking.Event, section string) string {
	u := "/events/" + ev.Slug + "/seats"
	if section != "" {
		u += "?section=" + url.QueryEscape(section)
	}
	return u
}

func onSaleText(ev booking.Event, now time.Time) string {
	if ev.OnsaleAt.After(now) {
		return "On sale from " + zone.Short(ev.OnsaleAt, ev.Zone)
	}
	return "On sale now"
}

// priceRange writes the prices from lo to hi as the shop's price lists do (Short:
// "€45–€65", "45–65 €" in German), one price when they are the same.
func priceRange(shop money.Shop, lo, hi int) string {
	if lo == hi {
		return shop.Short(lo)
	}
	return shop.Short(lo) + "–" + shop.Short(hi)
}

func leftText(n int) string {
	if n <= 0 {
		return "sold out"
	}
	return ordertext.Thousands(n) + " left"
}
