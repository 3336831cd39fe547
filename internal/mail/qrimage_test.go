package mail

import (
	"bytes"
	"image/png"
	"testing"

	"github.com/skip2/go-qrcode"
)

// TestQRPNG: the PNG is side × side and shows the QR code's every module (quiet zone
// included) in the right colour at its place, whole pixels per module, centred; the
// margin beyond is white.
func TestQRPNG(t *testing.T) {
	t.Parallel()
	for _, code := range []string{"BXO-7F3K-9QJ2-M4TZ-88AD", "a longer ticket code, to make a bigger QR version: 0123456789"} {
		data, err := qrPNG(code, qrPixels)
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
		for y, row := range bm {
			for x, want := range row {
				// every pixel of the module, its corners and middle
				for _, p := range [][2]int{{0, 0}, {scale - 1, 0}, {0, scale - 1}, {scale - 1, scale - 1}, {scale / 2, scale / 2}} {
					px, py := off+x*scale+p[0], off+y*scale+p[1]
					if got := dark(px, py); got != want {
						t.Fatalf("%q: module (%d, %d) at pixel (%d, %d): dark %v, want %v", code, x, y, px, py, got, want)
					}
				}
			}
		}
		for _, p := range [][2]int{{0, 0}, {qrPixels - 1, qrPixels - 1}, {off - 1, qrPixels / 2}, {qrPixels - 1, 0}} {
			if p[0] >= 0 && dark(p[0], p[1]) {
				t.Errorf("%q: margin pixel %v is dark, want white", code, p)
			}
		}
	}
}

// BenchmarkQRPNG against BenchmarkQRLibraryEncode (go-qrcode's own Encode, which the
// emails used before): the ratio is what docs/ONSALE.md quotes.
func BenchmarkQRPNG(b *testing.B) {
	for b.Loop() {
		if _, err := qrPNG("BXO-7F3K-9QJ2-M4TZ-88AD", qrPixels); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkQRLibraryEncode(b *testing.B) {
	for b.Loop() {
		if _, err := qrcode.Encode("BXO-7F3K-9QJ2-M4TZ-88AD", qrcode.High, qrPixels); err != nil {
			b.Fatal(err)
		}
	}
}
