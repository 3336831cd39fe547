package booking

import (
	"cmp"
	"slices"
)

// rowSeat is one seat of a row considered by best available.
type rowSeat struct {
	ID     int64
	Number int
	Price  int
	Rank   int
	Free   bool
}

// seatRow is one row's seats in seat-number order; rows come best first.
type seatRow []rowSeat

// choice is a set of seats best available may try to claim.
type choice struct {
	ids     []int64
	strands int // single free seats the choice would leave boxed in
	price   int
	rank    int
	row     int // index of the row in the candidate list, for a stable tie-break
}

// run is a stretch of free seats with consecutive numbers within one row.
type run struct{ lo, hi int } // indexes into the row, inclusive

func runsOf(r seatRow) []run {
	var out []run
	for i := 0; i < len(r); i++ {
		if !r[i].Free {
			continue
		}
		j := i
		for j+1 < len(r) && r[j+1].Free && r[j+1].Number == r[j].Number+1 {
			j++
		}
		out = append(out, run{i, j})
		i = j
	}
	return out
}

// pickTogether lists every way to seat n people side by side in one row, best first:
// first the choices that leave no single seat stranded between taken seats (or a taken
// seat and the row's end), then by total price, seat rank, and row order.
func pickTogether(rows []seatRow, n int) []choice {
	var out []choice
	for ri, r := range rows {
		for _, ru := range runsOf(r) {
			for start := ru.lo; start+n-1 <= ru.hi; start++ {
				c := choice{row: ri}
				left, right := start-ru.lo, ru.hi-(start+n-1)
				if left == 1 {
					c.strands++
				}
				if right == 1 {
					c.strands++
				}
				for k := start; k < start+n; k++ {
					c.ids = append(c.ids, r[k].ID)
					c.price += r[k].Price
					c.rank += r[k].Rank
				}
				out = append(out, c)
			}
		}
	}
	slices.SortStableFunc(out, compareChoices)
	return out
}

func compareChoices(a, b choice) int {
	return cmp.Or(
		cmp.Compare(min(a.strands, 1), min(b.strands, 1)),
		cmp.Compare(a.price, b.price),
		cmp.Compare(a.rank, b.rank),
		cmp.Compare(a.strands, b.strands),
		cmp.Compare(a.row, b.row),
	)
}

// pickScattered seats n people when no row has n together: the best free seats, taken
// as whole stretches where possible, without leaving a single seat stranded at the
// end of a stretch when that can be avoided. It returns nil when fewer than n are free.
func pickScattered(rows []seatRow, n int) []int64 {
	type stretch struct {
		row   seatRow
		ru    run
		price int
		rank  int
	}
	var all []stretch
	free := 0
	for _, r := range rows {
		for _, ru := range runsOf(r) {
			st := stretch{row: r, ru: ru, price: r[ru.lo].Price, rank: r[ru.lo].Rank}
			for k := ru.lo; k <= ru.hi; k++ {
				st.price, st.rank = min(st.price, r[k].Price), min(st.rank, r[k].Rank)
			}
			all = append(all, st)
			free += ru.hi - ru.lo + 1
		}
	}
	if free < n {
		return nil
	}
	slices.SortStableFunc(all, func(a, b stretch) int {
		return cmp.Or(cmp.Compare(a.price, b.price), cmp.Compare(a.rank, b.rank))
	})
	taken := make([]int, len(all))
	need := n
	// First pass: never leave exactly one seat of a stretch behind.
	for i, st := range all {
		if need == 0 {
			break
		}
		length := st.ru.hi - st.ru.lo + 1
		t := min(need, length)
		if length-t == 1 {
			t--
		}
		taken[i] = t
		need -= t
	}
	// Second pass, only if the first could not seat everyone: take what is left.
	for i, st := range all {
		if need == 0 {
			break
		}
		extra := min(need, st.ru.hi-st.ru.lo+1-taken[i])
		taken[i] += extra
		need -= extra
	}
	var ids []int64
	for i, st := range all {
		for k := 0; k < taken[i]; k++ {
			ids = append(ids, st.row[st.ru.lo+k].ID)
		}
	}
	return ids
}
