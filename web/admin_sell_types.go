package web

import (
	"context"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"boxoffice/internal/booking"
	"boxoffice/views"
)

// Forms that count tickets per type: the window's sale form (how many tickets of each
// type the buyer wants) and the basket's standing places. Fields are named type_<id>;
// an empty field counts none.

const typeCountPrefix = "type_"

// typeCountsTyped is what was typed into a form's type fields, by field name.
func typeCountsTyped(f url.Values) map[string]string {
	out := map[string]string{}
	for k, v := range f {
		if strings.HasPrefix(k, typeCountPrefix) && len(v) > 0 {
			out[k] = strings.TrimSpace(v[0])
		}
	}
	return out
}

// saleTypes reads the type counts typed into a sale form; a field that is not a type
// id or a count is a 400 that says so. Booking judges whether the event sells them.
func typeCounts(typed map[string]string) (map[int64]int, error) {
	out := map[int64]int{}
	for k, v := range typed {
		if v == "" {
			continue
		}
		id, err := booking.ParseID(strings.TrimPrefix(k, typeCountPrefix))
		if err != nil {
			return nil, badRequest("invalid_type", "That is not a ticket type of this event.")
		}
		n, err := formNumber(v, "tickets of a type")
		if err != nil || n < 0 || n > booking.MaxSaleSeats {
			return nil, badRequest("invalid_quantity", "Give the number of tickets of each type as a whole number from 0 to 100.")
		}
		if n > 0 {
			out[id] = n
		}
	}
	return out, nil
}

// saleTypeFields lists the types the window sells, each labelled with its prices, and
// what was typed for it.
func (s *server) saleTypeFields(ctx context.Context, eventID int64, typed map[string]string) ([]views.TypeCount, error) {
	types, err := s.Desk.DeskTypes(ctx, eventID)
	if err != nil {
		return nil, err
	}
	out := make([]views.TypeCount, 0, len(types))
	for _, t := range types {
		var prices []int
		for _, p := range t.Prices {
			prices = append(prices, int(p))
		}
		slices.Sort(prices)
		prices = slices.Compact(prices)
		words := make([]string, len(prices))
		for i, p := range prices {
			words[i] = s.Money.Short(p)
		}
		label := t.Name + " (" + strings.Join(words, ", ") + ")"
		if t.DeskOnly {
			label += ", box office only"
		}
		name := typeCountPrefix + strconv.FormatInt(t.ID, 10)
		out = append(out, views.TypeCount{InputID: "sale-" + name, Name: name, Label: label, Value: typed[name]})
	}
	return out, nil
}
