package payment

import (
	"testing"
)

func TestCardOutcome(t *testing.T) {
	t.Parallel()
	tests := []struct {
		card string
		want error
	}{
		{"4242424242424242", nil},
		{"4242 4242 4242 4242", nil},
		{"4000 0000 0000 0002", ErrDeclined},
		{"4000000000000002", ErrDeclined},
		{"", ErrInvalidCard},
		{"abc", ErrInvalidCard},
		{"4242", ErrInvalidCard},
		{"4242-4242-4242-4242", ErrInvalidCard},
		{"4242 4242 4242 4241", ErrInvalidCard},                  // fails Luhn
		{"1234567812345670", ErrInvalidCard},                     // passes Luhn, not a test card
		{"42424242424242424", ErrInvalidCard},                    // too long
		{"\uff14\uff12\uff14\uff12424242424242", ErrInvalidCard}, // full-width digits are not digits here
	}
	for _, tt := range tests {
		if got := cardOutcome(tt.card); got != tt.want {
			t.Errorf("cardOutcome(%q): got %v, want %v", tt.card, got, tt.want)
		}
	}
}

func TestLuhn(t *testing.T) {
	t.Parallel()
	tests := []struct {
		number string
		want   bool
	}{
		{"4242424242424242", true},
		{"4000000000000002", true},
		{"1234567812345670", true},
		{"79927398713", true},
		{"79927398710", false},
		{"4242424242424241", false},
		{"", false},
		{"12a4", false},
	}
	for _, tt := range tests {
		if got := luhn(tt.number); got != tt.want {
			t.Errorf("luhn(%q): got %v, want %v", tt.number, got, tt.want)
		}
	}
}

func TestParseDelivery(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in      string
		want    Delivery
		wantErr bool
	}{
		{"", DeliverNormal, false},
		{"normal", DeliverNormal, false},
		{"late", DeliverLate, false},
		{"twice", DeliverTwice, false},
		{"out_of_order", DeliverOutOfOrder, false},
		{"LATE", "", true},
		{"thrice", "", true},
	}
	for _, tt := range tests {
		got, err := ParseDelivery(tt.in)
		if got != tt.want || (err != nil) != tt.wantErr {
			t.Errorf("ParseDelivery(%q): got %q, %v; want %q, error %v", tt.in, got, err, tt.want, tt.wantErr)
		}
	}
}
