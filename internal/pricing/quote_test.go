package pricing

import (
	"errors"
	"testing"
	"time"
)

var (
	stalls  = Level{PriceTierID: 1}
	circle  = Level{PriceTierID: 2}
	floor   = Level{GATierID: 7}
	noon    = time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	adult   = Type{ID: 10, Name: "Adult", CountsAsAdult: true, Prices: map[Level]int64{stalls: 5000, circle: 3000, floor: 2500}}
	child   = Type{ID: 11, Name: "Child", NeedsAdult: true, MaxPerOrder: 4, Prices: map[Level]int64{stalls: 2500, circle: 1500}}
	conc    = Type{ID: 12, Name: "Concession", MaxPerOrder: 2, Prices: map[Level]int64{stalls: 4000}}
	comp    = Type{ID: 13, Name: "Companion", DeskOnly: true, Prices: map[Level]int64{stalls: 0}}
	member  = Type{ID: 14, Name: "Member", CodeOnly: true, Prices: map[Level]int64{stalls: 3500}}
	retired = Type{ID: 15, Name: "Retired", Paused: true, Prices: map[Level]int64{stalls: 1000}}
)

// typed is an event with every kind of type, no fees and no tax.
func typed() Config {
	return Config{Types: []Type{adult, child, conc, comp, member, retired}}
}

func line(level Level, typeID int64) Line { return Line{SeatID: 1, Level: level, TypeID: typeID} }

func lines(level Level, typeID int64, n int) []Line {
	out := make([]Line, n)
	for i := range out {
		out[i] = line(level, typeID)
	}
	return out
}

// TestQuoteRules: each rule refuses the basket that breaks it, with its typed error,
// and passes the basket that keeps it.
func TestQuoteRules(t *testing.T) {
	t.Parallel()
	code := &AccessCode{ID: 3, Code: "FANS", RevealsType: member.ID}
	cases := []struct {
		name   string
		basket Basket
		want   error // nil: accepted
	}{
		{"adult alone", Basket{Lines: lines(stalls, adult.ID, 2), Method: MethodOnline}, nil},
		{"child with adult", Basket{Lines: append(lines(stalls, adult.ID, 1), lines(circle, child.ID, 4)...), Method: MethodOnline}, nil},
		{"child alone", Basket{Lines: lines(stalls, child.ID, 1), Method: MethodOnline}, &NeedsAdultError{"Child"}},
		{"child with concession only", Basket{Lines: append(lines(stalls, conc.ID, 1), line(stalls, child.ID)), Method: MethodOnline}, &NeedsAdultError{"Child"}},
		{"cap reached", Basket{Lines: lines(stalls, conc.ID, 2), Method: MethodOnline}, nil},
		{"cap passed", Basket{Lines: lines(stalls, conc.ID, 3), Method: MethodOnline}, &CapError{"Concession", 2, 3}},
		{"child cap passed across levels", Basket{Lines: append(append(lines(stalls, adult.ID, 1), lines(stalls, child.ID, 3)...), lines(circle, child.ID, 2)...), Method: MethodOnline}, &CapError{"Child", 4, 5}},
		{"companion online", Basket{Lines: lines(stalls, comp.ID, 1), Method: MethodOnline}, &DeskOnlyError{"Companion"}},
		{"companion at the window", Basket{Lines: lines(stalls, comp.ID, 1), Method: MethodCash}, nil},
		{"companion by card at the window", Basket{Lines: lines(stalls, comp.ID, 1), Method: MethodCardPresent}, nil},
		{"member without code", Basket{Lines: lines(stalls, member.ID, 1), Method: MethodOnline}, &TypeError{"Member", TypeNeedsCode}},
		{"member with code", Basket{Lines: lines(stalls, member.ID, 1), Method: MethodOnline, Code: code}, nil},
		{"member with another code", Basket{Lines: lines(stalls, member.ID, 1), Method: MethodOnline, Code: &AccessCode{Code: "X", RevealsType: 99}}, &TypeError{"Member", TypeNeedsCode}},
		{"paused type", Basket{Lines: lines(stalls, retired.ID, 1), Method: MethodCash}, &TypeError{"Retired", TypePaused}},
		{"type not at level", Basket{Lines: lines(circle, conc.ID, 1), Method: MethodOnline}, &TypeError{"Concession", TypeNotAtLevel}},
		{"child on the floor", Basket{Lines: append(lines(floor, adult.ID, 1), line(floor, child.ID)), Method: MethodOnline}, &TypeError{"Child", TypeNotAtLevel}},
		{"unknown type", Basket{Lines: lines(stalls, 999, 1), Method: MethodOnline}, &TypeError{"type 999", TypeUnknown}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := typed().Quote(tc.basket)
			if tc.want == nil {
				if err != nil {
					t.Fatalf("got %v, want the basket accepted", err)
				}
				return
			}
			if !errors.Is(err, ErrRule) {
				t.Fatalf("got %v, want a broken rule", err)
			}
			if err.Error() != tc.want.Error() {
				t.Fatalf("got %q, want %q", err, tc.want)
			}
		})
	}
}

// TestQuoteAllViolations: a basket breaking several rules hears of each, and
// errors.As finds each kind.
func TestQuoteAllViolations(t *testing.T) {
	t.Parallel()
	b := Basket{Method: MethodOnline, Lines: append(append(lines(stalls, child.ID, 5), line(stalls, comp.ID)), line(stalls, comp.ID))}
	_, err := typed().Quote(b)
	var capErr *CapError
	var adultErr *NeedsAdultError
	var deskErr *DeskOnlyError
	if !errors.As(err, &capErr) || !errors.As(err, &adultErr) || !errors.As(err, &deskErr) {
		t.Fatalf("got %v, want a cap, a needs-an-adult and a desk-only violation", err)
	}
	if v := err.(Violations); len(v) != 3 {
		t.Fatalf("got %d violations (%v), want 3: the two companions are one", len(v), v)
	}
}

// TestQuoteDefaultType: a line without a chosen type sells as the first type offered
// there that needs no adult; where none is offered the basket is refused.
func TestQuoteDefaultType(t *testing.T) {
	t.Parallel()
	cfg := Config{Types: []Type{child, conc, adult}}
	q, err := cfg.Quote(Basket{Lines: []Line{line(stalls, 0), line(circle, 0)}, Method: MethodOnline})
	if err != nil {
		t.Fatal(err)
	}
	if q.Lines[0].TypeName != "Concession" || q.Lines[1].TypeName != "Adult" {
		t.Fatalf("got %s and %s, want Concession (first at stalls) and Adult (Child needs an adult)", q.Lines[0].TypeName, q.Lines[1].TypeName)
	}
	cfg = Config{Types: []Type{child}}
	if _, err := cfg.Quote(Basket{Lines: []Line{line(floor, 0)}, Method: MethodOnline}); err == nil || err.Error() != TypeNone {
		t.Fatalf("got %v, want %q", err, TypeNone)
	}
}

// TestQuoteUntyped: an event without types sells at each line's own price, with the
// fees and tax still applied.
func TestQuoteUntyped(t *testing.T) {
	t.Parallel()
	cfg := Config{Fees: Fees{PerTicket: 150, PerOrder: 200}, TaxRateBP: 2000}
	q, err := cfg.Quote(Basket{Lines: []Line{{SeatID: 1, BasePrice: 4500}, {SeatID: 2, BasePrice: 2850}}, Method: MethodOnline})
	if err != nil {
		t.Fatal(err)
	}
	// 4650 * 2000/12000 = 775; 3000 / 6 = 500; order fee 200 / 6 = 33.33 → 33.
	want := Quote{Prices: 7350, Fees: 500, Total: 7850, Tax: 775 + 500 + 33, OrderFee: 200, OrderFeeTax: 33}
	if q.Prices != want.Prices || q.Fees != want.Fees || q.Total != want.Total || q.Tax != want.Tax || q.OrderFee != want.OrderFee || q.OrderFeeTax != want.OrderFeeTax {
		t.Fatalf("got %+v, want %+v", q, want)
	}
	if q.Lines[0].TypeName != Standard {
		t.Fatalf("got type %q, want %q", q.Lines[0].TypeName, Standard)
	}
}
