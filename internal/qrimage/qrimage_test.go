package qrimage

import (
	"bytes"
	"image/png"
	"testing"

	"github.com/skip2/go-qrcode"
)

// qrPixels is the side the emails draw QR codes at (internal/mail).
const qrPixels = 360

// TestPNG: the PNG is side × side and shows the QR code's every module (quiet zone
// included) in the right colour at its place, whole pixels per module, centred; the
// margin beyond is white. Every pixel is checked, and a small code is drawn again
// after a larger one: the images are drawn on reused canvases, which must start white.
func TestPNG(t *testing.T) {
	t.Parallel()
	small, large := "BXO-7F3K-9QJ2-M4TZ-88AD", "a longer ticket code, to make a bigger QR version: 0123456789"
	for _, code := range []string{small, large, small} {
		data, err := PNG(code, qrPixels)
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(bytes.NewReader(data))
		if err != nil {
			t.Fatalf("decode: %v", err)
		}
		if b := img.Bounds(); b.Dx() != qrPixels || b.Dy() != qrPixels {
			t.Fatalf("got %v, want %d × %d", b, qrPixels, qrPixels)
		}
		q, err := qrcode.New(code, qrcode.High)
		if err != nil {
			t.Fatal(err)
		}
		bm := q.Bitmap()
		n := len(bm)
		scale, off := qrPixels/n, (qrPixels-n*(qrPixels/n))/2
		dark := func(x, y int) bool {
			r, g, b, _ := img.At(x, y).RGBA()
			return r+g+b == 0
		}
		for py := range qrPixels {
			for px := range qrPixels {
				x, y := (px-off)/scale, (py-off)/scale
				want := px >= off && py >= off && x < n && y < n && bm[y][x] // the margin is white
				if got := dark(px, py); got != want {
					t.Fatalf("%q: pixel (%d, %d), module (%d, %d): dark %v, want %v", code, px, py, x, y, got, want)
				}
			}
		}
	}
}

// BenchmarkPNG against BenchmarkLibraryEncode (go-qrcode's own Encode): the ratio
// is what drawing the QR images ourselves saves each confirmation email.
func BenchmarkPNG(b *testing.B) {
	for b.Loop() {
		if _, err := PNG("BXO-7F3K-9QJ2-M4TZ-88AD", qrPixels); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkLibraryEncode(b *testing.B) {
	for b.Loop() {
		if _, err := qrcode.Encode("BXO-7F3K-9QJ2-M4TZ-88AD", qrcode.High, qrPixels); err != nil {
			b.Fatal(err)
		}
	}
}
