package web

import (
	"context"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"boxoffice/internal/booking"
	"boxoffice/internal/money"
	"boxoffice/internal/zone"
	"boxoffice/views"
)

// The seats best available just found are shown where they are: marked on the map
// (seatStyle.picked, the class "picked"), named with their price in the message, and
// scrolled into view. With htmx the answer marks them and names their element ids in
// the message (data-picked), which picked.js scrolls to; without JavaScript the form's
// redirect names them in the seat page's address (?picked=) and its fragment, which
// the browser scrolls to itself.

// pickedParam names the found seats in the seat page's address.
const pickedParam = "picked"

// foundMessage says which seats best available found and what they cost, and names
// their elements for the page's script.
func foundMessage(shop money.Shop, seats []booking.Seat, expires time.Time, loc *time.Location) views.Message {
	ids := make([]string, len(seats))
	for i, st := range seats {
		ids[i] = seatDOMID(st.ID)
	}
	text := foundText(shop, seats)
	if !expires.IsZero() {
		text += " Held until " + zone.Clock(expires, loc) + "."
	}
	return views.Message{Text: text, Picked: strings.Join(ids, " ")}
}

// foundText names found seats in words: "4 seats found: Stalls row C, 12–15, 45.00
// each." Seats of one row are a range when their numbers follow each other.
func foundText(shop money.Shop, seats []booking.Seat) string {
	if len(seats) == 0 {
		return ""
	}
	s := slices.Clone(seats)
	slices.SortFunc(s, func(a, b booking.Seat) int {
		if a.Section != b.Section {
			return strings.Compare(a.Section, b.Section)
		}
		if a.Row != b.Row {
			return booking.CompareRows(a.Row, b.Row)
		}
		return a.Number - b.Number
	})
	var where []string
	for i := 0; i < len(s); {
		j := i
		for j+1 < len(s) && s[j+1].Section == s[i].Section && s[j+1].Row == s[i].Row && s[j+1].Number == s[j].Number+1 {
			j++
		}
		w := s[i].Section + " row " + s[i].Row + ", " + strconv.Itoa(s[i].Number)
		if j > i {
			w += "–" + strconv.Itoa(s[j].Number)
		}
		where = append(where, w)
		i = j + 1
	}
	head := strconv.Itoa(len(s)) + " seats found: "
	if len(s) == 1 {
		head = "1 seat found: "
	}
	total, same := 0, true
	for _, st := range s {
		total += st.PriceCents
		same = same && st.PriceCents == s[0].PriceCents
	}
	price := shop.Short(total) + " in all"
	switch {
	case len(s) == 1:
		price = shop.Short(total)
	case same:
		price = shop.Short(s[0].PriceCents) + " each"
	}
	return head + strings.Join(where, "; ") + ", " + price + "."
}

// foundView is the section of the seat page that shows the found seats: the one the
// buyer looked at, unless the venue is drawn a section at a time and they lie in
// another (or the buyer looked at the overview, which draws no seats).
func (s *server) foundView(ctx context.Context, eventID int64, view string, seats []booking.Seat) (string, error) {
	if len(seats) == 0 || view == seats[0].Section {
		return view, nil
	}
	_, sum, err := s.seatMapOf(ctx, eventID, "")
	if err != nil {
		return "", err
	}
	if view == "" && sum.Seats <= overviewMin {
		return "", nil
	}
	return seats[0].Section, nil
}

// foundURL is the seat page of section marking the found seats, scrolled to the first.
func foundURL(ev booking.Event, section string, seats []booking.Seat) string {
	ids := make([]string, len(seats))
	for i, st := range seats {
		ids[i] = strconv.FormatInt(st.ID, 10)
	}
	u := seatsURL(ev, section)
	sep := "?"
	if strings.Contains(u, "?") {
		sep = "&"
	}
	u += sep + pickedParam + "=" + url.QueryEscape(strings.Join(ids, ","))
	if len(seats) > 0 {
		u += "#" + seatDOMID(seats[0].ID)
	}
	return u
}

// markFound marks, on a seat page built for the buyer, the seats the address names as
// found (?picked=) that are theirs now, and says so in its message; anything else in
// the parameter is ignored: it only ever marks the buyer's own seats.
func (s *server) markFound(ctx context.Context, ev booking.Event, p *views.SeatsPage, param string) error {
	if param == "" {
		return nil
	}
	mine := map[string]bool{}
	for _, id := range strings.Fields(p.Holds.MineIDs) {
		mine[id] = true
	}
	var ids []int64
	for _, v := range strings.Split(param, ",") {
		id, err := strconv.ParseInt(v, 10, 64)
		if err == nil && mine[seatDOMID(id)] && len(ids) < booking.MaxHoldSeats {
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	m, err := s.Maps.SeatMapSeats(ctx, ev.ID, ids)
	if err != nil {
		return err
	}
	var seats []booking.Seat
	for _, st := range booking.SeatsByID(m, ids) {
		seats = append(seats, booking.Seat{ID: st.ID, Section: st.Section, Row: st.Row, Number: st.Number, PriceCents: st.PriceCents})
	}
	p.Message = foundMessage(s.Money, seats, time.Time{}, ev.Zone)
	picked := map[string]bool{}
	for _, st := range seats {
		picked[seatDOMID(st.ID)] = true
	}
	for r := range p.Map.Rows {
		for g := range p.Map.Rows[r].Groups {
			for i, sv := range p.Map.Rows[r].Groups[g].Seats {
				if picked[sv.DOMID] {
					p.Map.Rows[r].Groups[g].Seats[i].Class += " picked"
				}
			}
		}
	}
	return nil
}
