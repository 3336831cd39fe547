package catalog

import (
	"fmt"
	"strconv"
	"strings"

	"boxoffice/internal/money"
)

// SectionForm is a section as typed into the layout editor, every field text:
//
//	Rows:       "20" (rows A to T), "C-T" (a range of labels), or "A, B, C, AA"
//	Seats:      "40" (every row), or one count per row: "30, 32, 34"
//	Prices:     one line per row range: "A-H Premium 95.00", "I-T Standard 65"
//	Accessible: seats such as "T1, T40"; Companion likewise
type SectionForm struct {
	Name       string `json:"name"`
	Rows       string `json:"rows"`
	Seats      string `json:"seats"`
	Curved     bool   `json:"curved"`
	Prices     string `json:"prices"`
	Accessible string `json:"accessible"`
	Companion  string `json:"companion"`
}

// GAForm is a standing area as typed into the editor.
type GAForm struct {
	Name     string `json:"name"`
	Capacity string `json:"capacity"`
	Price    string `json:"price"`
}

// LayoutForm is the whole editor. Money is how the shop writes amounts: the prices
// are read and written back its way ("95,50" or "95.50"); the zero value writes them
// the English way.
type LayoutForm struct {
	Sections []SectionForm
	GA       []GAForm
	Money    money.Shop
}

// Parse turns the editor's text into a Layout; errors say which field and why. Blank
// sections and areas (no name and nothing else) are left out: the editor always
// offers an empty one to fill in.
func (f LayoutForm) Parse() (Layout, error) {
	var l Layout
	for i, sf := range f.Sections {
		if sf == (SectionForm{Curved: sf.Curved}) {
			continue
		}
		s, err := sf.parse(fmt.Sprintf("sections[%d]", i), f.Money)
		if err != nil {
			return Layout{}, err
		}
		l.Sections = append(l.Sections, s)
	}
	for i, gf := range f.GA {
		if gf == (GAForm{}) {
			continue
		}
		field := fmt.Sprintf("ga[%d]", i)
		name := strings.TrimSpace(gf.Name)
		capacity, err := strconv.Atoi(strings.TrimSpace(gf.Capacity))
		if err != nil {
			return Layout{}, invalid(field+".capacity", "%s: capacity %q is not a whole number", name, gf.Capacity)
		}
		price, err := parsePrice(f.Money, gf.Price)
		if err != nil {
			return Layout{}, invalid(field+".price", "%s: %v", name, err)
		}
		l.GA = append(l.GA, GAArea{Name: name, Capacity: capacity, PriceCents: price})
	}
	return l, l.Validate()
}

func (f SectionForm) parse(field string, m money.Shop) (Section, error) {
	s := Section{Name: strings.TrimSpace(f.Name), Curved: f.Curved}
	rows, err := parseRows(f.Rows)
	if err != nil {
		return Section{}, invalid(field+".rows", "%s: %v", s.Name, err)
	}
	s.Rows = rows
	counts, err := parseInts(f.Seats)
	if err != nil {
		return Section{}, invalid(field+".seats", "%s: %v", s.Name, err)
	}
	if len(counts) == 1 {
		for range rows {
			s.Seats = append(s.Seats, counts[0])
		}
	} else {
		s.Seats = counts
	}
	if s.Prices, err = parsePrices(m, f.Prices, rows); err != nil {
		return Section{}, invalid(field+".prices", "%s: %v", s.Name, err)
	}
	if s.Accessible, err = parseRefs(f.Accessible); err != nil {
		return Section{}, invalid(field+".accessible", "%s: %v", s.Name, err)
	}
	if s.Companion, err = parseRefs(f.Companion); err != nil {
		return Section{}, invalid(field+".companion", "%s: %v", s.Name, err)
	}
	return s, nil
}

// splitList splits on commas and white space.
func splitList(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\n' || r == '\r' || r == ';' })
}

// parseRows reads "20", "C-T" or "A, B, C".
func parseRows(s string) ([]string, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, fmt.Errorf("give the rows: a number such as 20, a range such as A-T, or labels such as A, B, C")
	}
	if n, err := strconv.Atoi(s); err == nil {
		if n < 1 || n > MaxRows {
			return nil, fmt.Errorf("between 1 and %d rows", MaxRows)
		}
		out := make([]string, n)
		for i := range out {
			out[i] = RowLabel(i)
		}
		return out, nil
	}
	var out []string
	for _, part := range splitList(s) {
		if from, to, ok := strings.Cut(part, "-"); ok {
			r, err := labelRange(strings.ToUpper(from), strings.ToUpper(to))
			if err != nil {
				return nil, err
			}
			out = append(out, r...)
		} else {
			out = append(out, strings.ToUpper(part))
		}
		if len(out) > MaxRows {
			return nil, fmt.Errorf("at most %d rows", MaxRows)
		}
	}
	return out, nil
}

// labelRange expands "C-T" (or "1-12", rows numbered) to every label between.
func labelRange(from, to string) ([]string, error) {
	if a, err := strconv.Atoi(from); err == nil {
		b, err := strconv.Atoi(to)
		if err != nil || b < a || a < 0 || b-a >= MaxRows {
			return nil, fmt.Errorf("row range %s-%s is not a range of at most %d rows", from, to, MaxRows)
		}
		var out []string
		for i := a; i <= b; i++ {
			out = append(out, strconv.Itoa(i))
		}
		return out, nil
	}
	a, b := labelIndex(from), labelIndex(to)
	if a < 0 || b < a || b-a >= MaxRows {
		return nil, fmt.Errorf("row range %s-%s is not a range such as A-T", from, to)
	}
	var out []string
	for i := a; i <= b; i++ {
		out = append(out, RowLabel(i))
	}
	return out, nil
}

// labelIndex is RowLabel's inverse, or -1.
func labelIndex(s string) int {
	if s == "" || len(s) > 3 {
		return -1
	}
	n := 0
	for _, r := range s {
		if r < 'A' || r > 'Z' {
			return -1
		}
		n = n*26 + int(r-'A'+1)
	}
	return n - 1
}

func parseInts(s string) ([]int, error) {
	parts := splitList(s)
	if len(parts) == 0 {
		return nil, fmt.Errorf("give the seats per row: one number, or one per row")
	}
	out := make([]int, len(parts))
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil {
			return nil, fmt.Errorf("seats per row %q is not a whole number", p)
		}
		out[i] = n
	}
	return out, nil
}

// parsePrices reads one "ROWS TIER PRICE" line per range; the ranges must cover every
// row once, front to back.
func parsePrices(m money.Shop, s string, rows []string) ([]RowPrice, error) {
	index := map[string]int{}
	for i, r := range rows {
		index[r] = i
	}
	var out []RowPrice
	next := 0
	for line := range strings.SplitSeq(s, "\n") {
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		if len(fields) < 3 {
			return nil, fmt.Errorf("price line %q: write rows, tier and price, such as \"A-H Premium 95.00\"", strings.TrimSpace(line))
		}
		from, to, _ := strings.Cut(strings.ToUpper(fields[0]), "-")
		if to == "" {
			to = from
		}
		a, okA := index[from]
		b, okB := index[to]
		if !okA || !okB || b < a {
			return nil, fmt.Errorf("price line %q: rows %s are not rows of this section", strings.TrimSpace(line), fields[0])
		}
		if a != next {
			if a < next {
				return nil, fmt.Errorf("price line %q: row %s is priced twice", strings.TrimSpace(line), from)
			}
			return nil, fmt.Errorf("row %s has no price", rows[next])
		}
		// The price is the last word, or the last two when it is written with its
		// symbol apart ("95,00 €") or a space between thousands.
		tierEnd := len(fields) - 1
		price, err := parsePrice(m, fields[tierEnd])
		if err != nil && len(fields) > 3 {
			if p2, err2 := parsePrice(m, fields[tierEnd-1]+" "+fields[tierEnd]); err2 == nil {
				price, err, tierEnd = p2, nil, tierEnd-1
			}
		}
		if err != nil {
			return nil, fmt.Errorf("price line %q: %v", strings.TrimSpace(line), err)
		}
		out = append(out, RowPrice{FromRow: a, Tier: strings.Join(fields[1:tierEnd], " "), PriceCents: price})
		next = b + 1
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("give prices, one line per row range, such as \"A-H Premium 95.00\"")
	}
	if next < len(rows) {
		return nil, fmt.Errorf("row %s has no price", rows[next])
	}
	return out, nil
}

// parseRefs reads seats such as "T1, T40" (row label, then the number).
func parseRefs(s string) ([]SeatRef, error) {
	var out []SeatRef
	for _, p := range splitList(s) {
		p = strings.ToUpper(p)
		i := strings.IndexFunc(p, func(r rune) bool { return r >= '0' && r <= '9' })
		if i <= 0 {
			return nil, fmt.Errorf("seat %q: write the row, then the number, such as T12", p)
		}
		n, err := strconv.Atoi(p[i:])
		if err != nil {
			return nil, fmt.Errorf("seat %q: write the row, then the number, such as T12", p)
		}
		out = append(out, SeatRef{Row: p[:i], Number: n})
	}
	return out, nil
}

// parsePrice reads a price the way the shop writes amounts (money.Shop.Parse: "65",
// "65,5", "€65.50") as cents, at most MaxPriceCents.
func parsePrice(m money.Shop, s string) (int, error) {
	cents, err := m.Parse(s)
	if err != nil {
		return 0, fmt.Errorf("price %v", err)
	}
	if cents > MaxPriceCents {
		return 0, fmt.Errorf("price %q is more than %s", strings.TrimSpace(s), m.Format(MaxPriceCents))
	}
	return cents, nil
}

// Form is the layout written back as the editor's text, to edit it again, with
// prices written as m writes amounts in a form.
func (l Layout) Form(m money.Shop) LayoutForm {
	f := LayoutForm{Money: m}
	for _, s := range l.Sections {
		sf := SectionForm{Name: s.Name, Curved: s.Curved, Rows: strings.Join(s.Rows, ", ")}
		if len(s.Rows) > 0 && s.Rows[0] == "A" && equalLabels(s.Rows) {
			sf.Rows = strconv.Itoa(len(s.Rows))
		}
		same := true
		for _, n := range s.Seats {
			same = same && n == s.Seats[0]
		}
		if same && len(s.Seats) > 0 {
			sf.Seats = strconv.Itoa(s.Seats[0])
		} else {
			parts := make([]string, len(s.Seats))
			for i, n := range s.Seats {
				parts[i] = strconv.Itoa(n)
			}
			sf.Seats = strings.Join(parts, ", ")
		}
		var lines []string
		for i, p := range s.Prices {
			last := len(s.Rows) - 1
			if i+1 < len(s.Prices) {
				last = s.Prices[i+1].FromRow - 1
			}
			if p.FromRow > last || last >= len(s.Rows) {
				continue
			}
			lines = append(lines, fmt.Sprintf("%s-%s %s %s", s.Rows[p.FromRow], s.Rows[last], p.Tier, m.Input(p.PriceCents)))
		}
		sf.Prices = strings.Join(lines, "\n")
		sf.Accessible = joinRefs(s.Accessible)
		sf.Companion = joinRefs(s.Companion)
		f.Sections = append(f.Sections, sf)
	}
	for _, g := range l.GA {
		f.GA = append(f.GA, GAForm{Name: g.Name, Capacity: strconv.Itoa(g.Capacity), Price: m.Input(g.PriceCents)})
	}
	return f
}

// equalLabels reports whether rows are A, B, C, ... in order: the form writes them as a
// count.
func equalLabels(rows []string) bool {
	for i, r := range rows {
		if r != RowLabel(i) {
			return false
		}
	}
	return true
}

func joinRefs(refs []SeatRef) string {
	parts := make([]string, len(refs))
	for i, r := range refs {
		parts[i] = r.String()
	}
	return strings.Join(parts, ", ")
}
