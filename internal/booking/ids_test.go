package booking

import "testing"

func TestParseID(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in     string
		want   int64
		wantOK bool
	}{
		{"1", 1, true},
		{"42", 42, true},
		{"007", 7, true},
		{"9223372036854775807", 9223372036854775807, true}, // the largest bigint
		{"", 0, false},
		{"0", 0, false},
		{"000", 0, false},
		{"-1", 0, false},
		{"+1", 0, false},
		{" 1", 0, false},
		{"1 ", 0, false},
		{"1\n", 0, false},
		{"1.0", 0, false},
		{"1e3", 0, false},
		{"0x10", 0, false},
		{"abc", 0, false},
		{"١", 0, false},                    // a digit, but not an ASCII one
		{"9223372036854775808", 0, false},  // one past the largest bigint
		{"99999999999999999999", 0, false}, // twenty digits
		{"00000000000000000001", 0, false}, // twenty characters, though small
	}
	for _, tt := range tests {
		got, err := ParseID(tt.in)
		if (err == nil) != tt.wantOK || got != tt.want {
			t.Errorf("ParseID(%q) = %d, %v; want %d, ok %v", tt.in, got, err, tt.want, tt.wantOK)
		}
	}
}

func TestParseHoldID(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in     string
		want   HoldID
		wantOK bool
	}{
		{"7-1042", HoldID{Event: 7, Seq: 1042}, true},
		{"1-1", HoldID{Event: 1, Seq: 1}, true},
		{"9223372036854775807-9223372036854775807", HoldID{Event: 9223372036854775807, Seq: 9223372036854775807}, true},
		{"", HoldID{}, false},
		{"1", HoldID{}, false},
		{"1-", HoldID{}, false},
		{"-1", HoldID{}, false},
		{"-", HoldID{}, false},
		{"0-1", HoldID{}, false},
		{"1-0", HoldID{}, false},
		{"1--2", HoldID{}, false},
		{"1-2-3", HoldID{}, false},
		{"+1-2", HoldID{}, false},
		{"1-+2", HoldID{}, false},
		{" 1-2", HoldID{}, false},
		{"1 -2", HoldID{}, false},
		{"1- 2", HoldID{}, false},
		{"1-2 ", HoldID{}, false},
		{"a-1", HoldID{}, false},
		{"1_2", HoldID{}, false},
		{"1-9223372036854775808", HoldID{}, false},
		{"9223372036854775808-1", HoldID{}, false},
	}
	for _, tt := range tests {
		got, err := ParseHoldID(tt.in)
		if (err == nil) != tt.wantOK || got != tt.want {
			t.Errorf("ParseHoldID(%q) = %+v, %v; want %+v, ok %v", tt.in, got, err, tt.want, tt.wantOK)
		}
	}
}

// TestHoldIDRoundTrip: the text form of a hold id parses back to the same id.
func TestHoldIDRoundTrip(t *testing.T) {
	t.Parallel()
	for _, id := range []HoldID{{1, 1}, {7, 1042}, {9223372036854775807, 1}, {1, 9223372036854775807}} {
		got, err := ParseHoldID(id.String())
		if err != nil || got != id {
			t.Errorf("ParseHoldID(%q) = %+v, %v; want %+v", id.String(), got, err, id)
		}
	}
}
