package pricing

import (
	"testing"
	"time"
)

// TestTaxIncluded: tax-inclusive tax rounds half to even in minor units.
func TestTaxIncluded(t *testing.T) {
	t.Parallel()
	cases := []struct {
		gross int64
		bp    int
		want  int64
	}{
		{0, 2000, 0},
		{1200, 2000, 200},   // exact
		{100, 2000, 17},     // 16.67
		{1, 2000, 0},        // 0.17
		{3, 2000, 0},        // 0.5 → even 0
		{9, 2000, 2},        // 1.5 → even 2
		{15, 2000, 2},       // 2.5 → even 2
		{21, 2000, 4},       // 3.5 → even 4
		{5000, 0, 0},        // no tax
		{5000, 10000, 2500}, // 100 %: half the gross
		{1999, 700, 131},    // 130.78
		{2140, 700, 140},    // exact
		{1070, 700, 70},     // exact
		{535, 700, 35},      // exact
		{107, 700, 7},       // exact
		{53, 700, 3},        // 3.467
		{-100, 2000, 0},     // never negative
	}
	for _, tc := range cases {
		if got := TaxIncluded(tc.gross, tc.bp); got != tc.want {
			t.Errorf("TaxIncluded(%d, %d): got %d, want %d", tc.gross, tc.bp, got, tc.want)
		}
	}
}

// TestQuoteFees: fees per ticket and per order, every method's plus the method's own;
// the order fee once per order, none on an empty basket.
func TestQuoteFees(t *testing.T) {
	t.Parallel()
	cfg := typed()
	cfg.Fees = Fees{PerTicket: 250, PerOrder: 100}
	cfg.MethodFees = map[Method]Fees{MethodOnline: {PerTicket: 50, PerOrder: 75}, MethodCash: {}}
	cases := []struct {
		method            Method
		n                 int
		fees, fee, totals int64
	}{
		{MethodOnline, 3, 3*300 + 175, 175, 3*5000 + 3*300 + 175},
		{MethodCash, 3, 3*250 + 100, 100, 3*5000 + 3*250 + 100},
		{MethodCardPresent, 1, 250 + 100, 100, 5000 + 250 + 100},
		{MethodOnline, 0, 0, 0, 0},
	}
	for _, tc := range cases {
		q, err := cfg.Quote(Basket{Lines: lines(stalls, adult.ID, tc.n), Method: tc.method})
		if err != nil {
			t.Fatal(err)
		}
		if q.Fees != tc.fees || q.OrderFee != tc.fee || q.Total != tc.totals {
			t.Errorf("%s × %d: got fees %d, order fee %d, total %d; want %d, %d, %d", tc.method, tc.n, q.Fees, q.OrderFee, q.Total, tc.fees, tc.fee, tc.totals)
		}
	}
}

// TestAllIn: the first price shown is the price plus every per-ticket fee for the
// method; the "from" price is the lowest public type's.
func TestAllIn(t *testing.T) {
	t.Parallel()
	cfg := typed()
	cfg.Fees = Fees{PerTicket: 250, PerOrder: 100}
	cfg.MethodFees = map[Method]Fees{MethodOnline: {PerTicket: 50}}
	if got, ok := cfg.AllIn(stalls, 0, child.ID, MethodOnline); !ok || got != 2500+300 {
		t.Errorf("child online: got %d %v, want 2800", got, ok)
	}
	if got, ok := cfg.AllIn(stalls, 0, child.ID, MethodCash); !ok || got != 2500+250 {
		t.Errorf("child cash: got %d %v, want 2750", got, ok)
	}
	if _, ok := cfg.AllIn(circle, 0, conc.ID, MethodOnline); ok {
		t.Error("concession in the circle: got a price, want none (not offered)")
	}
	// Companion (0) is desk-only and Member (3500) code-only: online the lowest is Child.
	if got, ok := cfg.From(stalls, 0, MethodOnline); !ok || got != 2500+300 {
		t.Errorf("from online: got %d %v, want 2800", got, ok)
	}
	if got, ok := cfg.From(stalls, 0, MethodCash); !ok || got != 0+250 {
		t.Errorf("from at the window: got %d %v, want 250 (companion)", got, ok)
	}
	if got, ok := (Config{Fees: Fees{PerTicket: 99}}).From(stalls, 4000, MethodOnline); !ok || got != 4099 {
		t.Errorf("untyped: got %d %v, want 4099", got, ok)
	}
}

// TestQuoteSumsExactly: over many prices and rates the lines' totals and tax add up
// to the order's, to the minor unit.
func TestQuoteSumsExactly(t *testing.T) {
	t.Parallel()
	for _, bp := range []int{0, 500, 700, 1900, 2000, 2100, 2500} {
		cfg := Config{Fees: Fees{PerTicket: 137, PerOrder: 99}, TaxRateBP: bp}
		var ls []Line
		for p := int64(1); p < 200; p += 7 {
			ls = append(ls, Line{SeatID: p, BasePrice: p * 13})
		}
		q, err := cfg.Quote(Basket{Lines: ls, Method: MethodOnline, Voucher: &Voucher{Code: "TEN", PercentOffBP: 1000}, Now: noon})
		if err != nil {
			t.Fatal(err)
		}
		var total, tax int64
		for _, l := range q.Lines {
			if l.Total != l.Price+l.Fee-l.Discount {
				t.Fatalf("line %+v: total is not price + fee - discount", l)
			}
			total, tax = total+l.Total, tax+l.Tax
		}
		if total+q.OrderFee != q.Total || tax+q.OrderFeeTax != q.Tax {
			t.Fatalf("rate %d: lines add to %d (tax %d), order says %d (tax %d)", bp, total+q.OrderFee, tax+q.OrderFeeTax, q.Total, q.Tax)
		}
	}
}

// TestQuoteVoucher: a voucher on a mixed basket discounts only its types' prices,
// never the fees, never below zero; an unusable one is refused with its reason.
func TestQuoteVoucher(t *testing.T) {
	t.Parallel()
	cfg := typed()
	cfg.Fees, cfg.TaxRateBP = Fees{PerTicket: 200, PerOrder: 300}, 2000
	mixed := []Line{line(stalls, adult.ID), line(stalls, child.ID), line(circle, child.ID), line(stalls, conc.ID)}
	cases := []struct {
		name      string
		v         Voucher
		discounts []int64 // per line; nil: refused
		reason    string
	}{
		{"10 % off children", Voucher{Code: "KIDS", PercentOffBP: 1000, TypeIDs: []int64{child.ID}}, []int64{0, 250, 150, 0}, ""},
		{"12.5 % off all, half to even", Voucher{Code: "ALL", PercentOffBP: 1250}, []int64{625, 312, 188, 500}, ""},
		{"100 % off children", Voucher{Code: "FREE", PercentOffBP: 10000, TypeIDs: []int64{child.ID}}, []int64{0, 2500, 1500, 0}, ""},
		{"30.00 off children, spread", Voucher{Code: "THIRTY", AmountOff: 3000, TypeIDs: []int64{child.ID}}, []int64{0, 2500, 500, 0}, ""},
		{"500.00 off all, capped at prices", Voucher{Code: "BIG", AmountOff: 50000}, []int64{5000, 2500, 1500, 4000}, ""},
		{"5.00 off adults", Voucher{Code: "FIVE", AmountOff: 500, TypeIDs: []int64{adult.ID, conc.ID}}, []int64{500, 0, 0, 0}, ""},
		{"not for these types", Voucher{Code: "MEM", AmountOff: 500, TypeIDs: []int64{member.ID}}, nil, VoucherNotForThis},
		{"paused", Voucher{Code: "P", PercentOffBP: 500, Paused: true}, nil, VoucherPaused},
		{"not yet", Voucher{Code: "SOON", PercentOffBP: 500, ValidFrom: noon.Add(time.Minute)}, nil, VoucherNotYet},
		{"from now", Voucher{Code: "NOW", PercentOffBP: 10000, ValidFrom: noon}, []int64{5000, 2500, 1500, 4000}, ""},
		{"expired", Voucher{Code: "OLD", PercentOffBP: 500, ValidUntil: noon}, nil, VoucherExpired},
		{"used up", Voucher{Code: "GONE", PercentOffBP: 500, Limit: 5, Used: 5}, nil, VoucherUsedUp},
		{"one use left", Voucher{Code: "LAST", AmountOff: 100, Limit: 5, Used: 4}, []int64{100, 0, 0, 0}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			v := tc.v
			q, err := cfg.Quote(Basket{Lines: mixed, Method: MethodOnline, Voucher: &v, Now: noon})
			if tc.discounts == nil {
				want := (&VoucherError{Code: v.Code, Reason: tc.reason}).Error()
				if err == nil || err.Error() != want {
					t.Fatalf("got %v, want %q", err, want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var sum int64
			for i, l := range q.Lines {
				if l.Discount != tc.discounts[i] {
					t.Errorf("line %d (%s): got discount %d, want %d", i, l.TypeName, l.Discount, tc.discounts[i])
				}
				if l.Fee != 200 || l.Total < l.Fee {
					t.Errorf("line %d: fee %d, total %d: the fee was discounted", i, l.Fee, l.Total)
				}
				sum += tc.discounts[i]
			}
			if want := 13000 + 4*200 + 300 - sum; q.Discount != sum || q.Total != want {
				t.Errorf("got discount %d, total %d; want %d, %d", q.Discount, q.Total, sum, want)
			}
		})
	}
}

// TestQuoteMixedBasketItemised: a whole mixed basket, worked by hand, with a voucher,
// online fees and tax.
func TestQuoteMixedBasketItemised(t *testing.T) {
	t.Parallel()
	cfg := typed()
	cfg.Fees, cfg.TaxRateBP = Fees{PerTicket: 150, PerOrder: 250}, 2000
	cfg.MethodFees = map[Method]Fees{MethodOnline: {PerTicket: 25}}
	b := Basket{Method: MethodOnline, Now: noon, Voucher: &Voucher{ID: 9, Code: "KIDS", PercentOffBP: 3333, TypeIDs: []int64{child.ID}},
		Lines: []Line{line(stalls, adult.ID), line(stalls, child.ID), {GATierID: 7, Level: floor, TypeID: adult.ID}}}
	q, err := cfg.Quote(b)
	if err != nil {
		t.Fatal(err)
	}
	// Adult stalls: 5000 + 175 = 5175, tax 862.5 → 862 (even).
	// Child stalls: 2500 + 175 - 833 (833.25) = 1842, tax 307.
	// Adult floor: 2500 + 175 = 2675, tax 445.83 → 446. Order fee 250, tax 41.67 → 42.
	want := []LineQuote{
		{TypeName: "Adult", Price: 5000, Fee: 175, Total: 5175, Tax: 862},
		{TypeName: "Child", Price: 2500, Fee: 175, Discount: 833, Total: 1842, Tax: 307},
		{TypeName: "Adult", Price: 2500, Fee: 175, Total: 2675, Tax: 446},
	}
	for i, w := range want {
		g := q.Lines[i]
		if g.TypeName != w.TypeName || g.Price != w.Price || g.Fee != w.Fee || g.Discount != w.Discount || g.Total != w.Total || g.Tax != w.Tax {
			t.Errorf("line %d: got %+v, want %+v", i, g, w)
		}
	}
	if q.Total != 5175+1842+2675+250 || q.Tax != 862+307+446+42 || q.Discount != 833 || q.VoucherID != 9 || q.Fees != 3*175+250 {
		t.Errorf("got total %d tax %d discount %d voucher %d fees %d", q.Total, q.Tax, q.Discount, q.VoucherID, q.Fees)
	}
}
