package booking

import (
	"cmp"
	"slices"
)

// rowSeat is one seat of a row considered by best available, with its row's place:
// Pos is the seat's place across the row and Mid2 twice the row's middle, both in map
// units (in seat numbers for a map without coordinates); Depth is the row's distance
// from the stage (0: unknown, the row's place among the candidates stands in).
type rowSeat struct {
	ID     int64
	Number int
	Price  int
	Rank   int
	Free   bool
	Pos    int
	Mid2   int
	Depth  int
}

// seatRow is one row's seats in seat-number order; rows come best first.
type seatRow []rowSeat

// choice is a set of seats best available may try to claim.
type choice struct {
	ids     []int64
	strands int // single free seats the choice would leave boxed in
	depth   int // the row's distance from the stage
	offset  int // twice the distance of the block's middle from the row's middle
	price   int
	rank    int
	row     int // index of the row in the candidate list, for a stable tie-break
}

// depth is the row's distance from the stage, or, on a map without coordinates, its
// index i among the candidates, which come nearest first.
func (r seatRow) depth(i int) int {
	if len(r) == 0 || r[0].Depth == 0 {
		return i
	}
	return r[0].Depth
}

// offset is twice the distance of the middle of the seats r[lo..hi] from the row's.
func (r seatRow) offset(lo, hi int) int {
	return abs(r[lo].Pos + r[hi].Pos - r[lo].Mid2)
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
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
// seat and the row's end), then nearest the stage's front rows' centre (the row's
// distance from the stage, then the block's middle's distance from the row's), then by
// total price, seat rank, and row order.
func pickTogether(rows []seatRow, n int) []choice {
	var out []choice
	for ri, r := range rows {
		depth := r.depth(ri)
		for _, ru := range runsOf(r) {
			for start := ru.lo; start+n-1 <= ru.hi; start++ {
				c := choice{row: ri, depth: depth, offset: r.offset(start, start+n-1)}
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
		cmp.Compare(a.depth, b.depth),
		cmp.Compare(a.offset, b.offset),
		cmp.Compare(a.price, b.price),
		cmp.Compare(a.rank, b.rank),
		cmp.Compare(a.strands, b.strands),
		cmp.Compare(a.row, b.row),
	)
}

// pickScattered seats n people when no row has n together: the free seats nearest the
// stage's front rows' centre (the stretches of free seats by their row's distance from
// the stage, then by their middle's distance from the row's), taken as whole stretches
// where possible, without leaving a single seat stranded at the end of a stretch when
// that can be avoided. It returns nil when fewer than n are free.
func pickScattered(rows []seatRow, n int) []int64 {
	type stretch struct {
		row    seatRow
		ru     run
		depth  int
		offset int
	}
	var all []stretch
	free := 0
	for ri, r := range rows {
		for _, ru := range runsOf(r) {
			all = append(all, stretch{row: r, ru: ru, depth: r.depth(ri), offset: r.offset(ru.lo, ru.hi)})
			free += ru.hi - ru.lo + 1
		}
	}
	if free < n {
		return nil
	}
	slices.SortStableFunc(all, func(a, b stretch) int {
		return cmp.Or(cmp.Compare(a.depth, b.depth), cmp.Compare(a.offset, b.offset))
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

// choose lists the seats best available tries for req from rows, best first: side by
// side when a row can seat the party, else, unless req wants them together, the best
// scattered seats. clean says the best of them strands no single seat, or is the
// scattered fallback, which never strands one it can avoid.
func choose(rows []seatRow, req HoldRequest) (tries [][]int64, clean bool) {
	together := pickTogether(rows, req.Quantity)
	if len(together) > 0 {
		return spread(disjoint(together, triesPerLook)), together[0].strands == 0
	}
	if !req.Together {
		if ids := pickScattered(rows, req.Quantity); ids != nil {
			return [][]int64{ids}, true
		}
	}
	return nil, true
}
