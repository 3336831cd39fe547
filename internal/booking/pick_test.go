package booking

import (
	"slices"
	"testing"
)

// pictureRow builds a row from a picture: F is a free seat, T a taken one, and | an
// aisle (the next seat's number skips one). Seat k of the picture, counting from 1
// without aisles, has id base+k. The row lies base map units from the stage, its seats
// 12 apart; the middle of the row ranks best, as in the demo.
func pictureRow(base int64, price int, picture string) seatRow {
	var seats int
	for _, c := range picture {
		if c != '|' {
			seats++
		}
	}
	var r seatRow
	number, k := 0, 0
	for _, c := range picture {
		number++
		if c == '|' {
			continue
		}
		k++
		r = append(r, rowSeat{
			ID: base + int64(k), Number: number, Price: price,
			Rank: abs(2*k - seats - 1), Free: c == 'F',
			Pos: 12 * number, Mid2: 12 * (1 + len(picture)), Depth: int(base),
		})
	}
	return r
}

// atDepth puts the row at depth map units from the stage.
func atDepth(r seatRow, depth int) seatRow {
	for i := range r {
		r[i].Depth = depth
	}
	return r
}

// isolated reports, for every free seat of the rows not in chosen, whether its
// neighbours on both sides are taken, chosen, or not there (the row's end or an aisle).
func isolated(rows []seatRow, chosen []int64) map[int64]bool {
	free := func(r seatRow, i int) bool { return r[i].Free && !slices.Contains(chosen, r[i].ID) }
	out := map[int64]bool{}
	for _, r := range rows {
		for i := range r {
			if !free(r, i) {
				continue
			}
			left := i > 0 && r[i-1].Number == r[i].Number-1 && free(r, i-1)
			right := i+1 < len(r) && r[i+1].Number == r[i].Number+1 && free(r, i+1)
			out[r[i].ID] = !left && !right
		}
	}
	return out
}

// newStrands is how many free seats taking chosen would leave boxed in that were not
// boxed in before.
func newStrands(rows []seatRow, chosen []int64) int {
	before, after := isolated(rows, nil), isolated(rows, chosen)
	n := 0
	for id, alone := range after {
		if alone && !before[id] {
			n++
		}
	}
	return n
}

// seatOf finds a seat by id.
func seatOf(rows []seatRow, id int64) (row int, s rowSeat, ok bool) {
	for ri, r := range rows {
		for _, s := range r {
			if s.ID == id {
				return ri, s, true
			}
		}
	}
	return 0, rowSeat{}, false
}

func TestPickTogether(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		rows    []seatRow
		n       int
		choices int     // how many ways there are
		first   []int64 // the best way; nil: any, as long as it strands no seat it could avoid
	}{
		{"a seat to spare must strand one", []seatRow{pictureRow(100, 5000, "TFFFFFT")}, 4, 2, nil},
		{"an exact fit elsewhere beats stranding one",
			[]seatRow{pictureRow(100, 5000, "TFFFFFT"), pictureRow(200, 5000, "TFFFFT")}, 4, 3, []int64{202, 203, 204, 205}},
		{"exact fit between taken seats", []seatRow{pictureRow(100, 5000, "TFFFT")}, 3, 1, []int64{102, 103, 104}},
		{"exact fit between the row's ends", []seatRow{pictureRow(100, 5000, "FFFF")}, 4, 1, []int64{101, 102, 103, 104}},
		{"the row's ends are walls", []seatRow{pictureRow(100, 5000, "FFFFF")}, 4, 2, nil},
		{"room to spare without stranding", []seatRow{pictureRow(100, 5000, "FFFFFF")}, 4, 3, nil},
		{"the row nearer the stage first, whatever its price",
			[]seatRow{pictureRow(200, 3000, "FFFF"), pictureRow(100, 9000, "FFFF")}, 4, 2, []int64{101, 102, 103, 104}},
		{"not stranding a seat comes before the nearer row",
			[]seatRow{pictureRow(100, 3000, "FFFFF"), pictureRow(200, 9000, "FFFF")}, 4, 3, []int64{201, 202, 203, 204}},
		{"the block nearest the row's middle that strands none",
			[]seatRow{pictureRow(100, 5000, "FFFTTFFFFF")}, 3, 4, []int64{106, 107, 108}},
		{"at the same distance from the stage, the more central block",
			[]seatRow{pictureRow(100, 5000, "FFFFTTTTTT"), atDepth(pictureRow(200, 5000, "TTTFFFFTTT"), 100)}, 4, 2, []int64{204, 205, 206, 207}},
		{"equally placed, the cheaper",
			[]seatRow{pictureRow(100, 9000, "FFFF"), atDepth(pictureRow(200, 3000, "FFFF"), 100)}, 4, 2, []int64{201, 202, 203, 204}},
		{"the middle first among equals", []seatRow{pictureRow(100, 5000, "FFFFFFFFFF")}, 2, 9, []int64{105, 106}},
		{"an aisle breaks a run", []seatRow{pictureRow(100, 5000, "FFF|FFF")}, 4, 0, nil},
		{"runs on both sides of an aisle", []seatRow{pictureRow(100, 5000, "FFF|FFF")}, 3, 2, nil},
		{"a taken seat breaks a run", []seatRow{pictureRow(100, 5000, "FFTFF")}, 3, 0, nil},
		{"a party bigger than the row", []seatRow{pictureRow(100, 5000, "FFF")}, 4, 0, nil},
		{"nothing free", []seatRow{pictureRow(100, 5000, "TTTT")}, 1, 0, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := pickTogether(tt.rows, tt.n)
			if len(got) != tt.choices {
				t.Fatalf("got %d choices, want %d: %+v", len(got), tt.choices, got)
			}
			if tt.first != nil && !slices.Equal(got[0].ids, tt.first) {
				t.Errorf("got first choice %v, want %v", got[0].ids, tt.first)
			}
			avoidable := false
			for _, c := range got {
				if len(c.ids) != tt.n {
					t.Errorf("choice %v: got %d seats, want %d", c.ids, len(c.ids), tt.n)
					continue
				}
				row0, prev, _ := seatOf(tt.rows, c.ids[0])
				for i, id := range c.ids {
					row, s, ok := seatOf(tt.rows, id)
					switch {
					case !ok || !s.Free:
						t.Errorf("choice %v: seat %d is not a free seat", c.ids, id)
					case row != row0 || (i > 0 && s.Number != prev.Number+1):
						t.Errorf("choice %v: seat %d is not next to the one before in the same row", c.ids, id)
					}
					prev = s
				}
				strands := newStrands(tt.rows, c.ids)
				if c.strands != strands {
					t.Errorf("choice %v: got strands %d, want %d", c.ids, c.strands, strands)
				}
				if strands == 0 {
					avoidable = true
				}
			}
			if len(got) > 0 && avoidable && newStrands(tt.rows, got[0].ids) > 0 {
				t.Errorf("first choice %v strands a seat, want one of the choices that strands none", got[0].ids)
			}
		})
	}
}

func TestPickScattered(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		rows    []seatRow
		n       int
		want    []int64 // in any order; nil: no seats
		strands int     // single free seats the pick leaves boxed in
	}{
		{"fewer free than asked", []seatRow{pictureRow(100, 5000, "FTF")}, 3, nil, 0},
		{"exactly as many free as asked", []seatRow{pictureRow(100, 5000, "FTFTF")}, 3, []int64{101, 103, 105}, 0},
		{"nearer seats first, whatever their price",
			[]seatRow{pictureRow(200, 3000, "FTF"), pictureRow(100, 9000, "FTF")}, 2, []int64{101, 103}, 0},
		{"the middle of a row first",
			[]seatRow{pictureRow(100, 5000, "FTFFTF")}, 2, []int64{103, 104}, 0},
		{"whole stretches",
			[]seatRow{pictureRow(100, 5000, "FFTFF"), pictureRow(200, 6000, "FFFF")}, 4, []int64{101, 102, 104, 105}, 0},
		{"no seat left alone at a stretch's end",
			[]seatRow{pictureRow(100, 3000, "FFF"), pictureRow(200, 4000, "FFF"), pictureRow(300, 5000, "FFF")}, 5,
			[]int64{101, 102, 103, 201, 301}, 0},
		{"a seat left alone when nothing else seats everyone",
			[]seatRow{pictureRow(100, 3000, "FF"), pictureRow(200, 3000, "FF"), pictureRow(300, 3000, "FF")}, 3, nil, 1},
		{"taken and aisle seats are never picked",
			[]seatRow{pictureRow(100, 5000, "TF|FT|F")}, 3, []int64{102, 103, 105}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := pickScattered(tt.rows, tt.n)
			free := 0
			for _, r := range tt.rows {
				for _, s := range r {
					if s.Free {
						free++
					}
				}
			}
			if free < tt.n {
				if got != nil {
					t.Errorf("got %v, want nil with %d free for %d", got, free, tt.n)
				}
				return
			}
			if len(got) != tt.n {
				t.Fatalf("got %d seats %v, want %d", len(got), got, tt.n)
			}
			if tt.want != nil && !slices.Equal(slices.Sorted(slices.Values(got)), tt.want) {
				t.Errorf("got %v, want %v", slices.Sorted(slices.Values(got)), tt.want)
			}
			for i, id := range got {
				if _, s, ok := seatOf(tt.rows, id); !ok || !s.Free {
					t.Errorf("seat %d is not a free seat", id)
				}
				if slices.Contains(got[:i], id) {
					t.Errorf("seat %d picked twice", id)
				}
			}
			if s := newStrands(tt.rows, got); s != tt.strands {
				t.Errorf("pick %v leaves %d seats alone, want %d", got, s, tt.strands)
			}
		})
	}
}
