// Package pdftest reads back what tests need of the PDFs package ticketpdf writes: the
// pages, the text on each (fpdf sets text in a UTF-8 font as UTF-16BE strings in
// Flate-compressed content streams, with an identity ToUnicode map) and the images.
// It reads fpdf's output, not PDF at large.
package pdftest

import (
	"bytes"
	"compress/zlib"
	"errors"
	"io"
	"regexp"
	"strings"
	"unicode/utf16"
)

// Doc is what a PDF holds, as far as tests look.
type Doc struct {
	// Pages is the number of page objects (/Type /Page).
	Pages int
	// Images are the image objects' widths in pixels, in the file's order.
	Images []int
	// Text is the text of each page's content stream, in page order, each string
	// drawn on its own line.
	Text []string
}

var (
	pageObj  = regexp.MustCompile(`/Type /Page[^s]`)
	imageObj = regexp.MustCompile(`/Subtype /Image\s*/Width (\d+)`)
	stream   = regexp.MustCompile(`(?s)<<([^<>]*)>>\s*stream\r?\n`)
	shown    = regexp.MustCompile(`(?s)\(((?:[^()\\]|\\.)*)\)\s*Tj`)
)

// Read reads a PDF that ticketpdf wrote.
func Read(data []byte) (Doc, error) {
	var d Doc
	if !bytes.HasPrefix(data, []byte("%PDF-")) || !bytes.Contains(data[max(0, len(data)-32):], []byte("%%EOF")) {
		return d, errors.New("pdftest: not a whole PDF file")
	}
	d.Pages = len(pageObj.FindAll(data, -1))
	for _, m := range imageObj.FindAllSubmatch(data, -1) {
		w := 0
		for _, c := range m[1] {
			w = w*10 + int(c-'0')
		}
		d.Images = append(d.Images, w)
	}
	for _, loc := range stream.FindAllSubmatchIndex(data, -1) {
		dict := string(data[loc[2]:loc[3]])
		if strings.Contains(dict, "/Subtype") || strings.Contains(dict, "/Length1") {
			continue // an image or the font, not a page's content
		}
		end := bytes.Index(data[loc[1]:], []byte("endstream"))
		if end < 0 {
			return d, errors.New("pdftest: a stream without its end")
		}
		body := data[loc[1] : loc[1]+end]
		if strings.Contains(dict, "/FlateDecode") {
			r, err := zlib.NewReader(bytes.NewReader(body))
			if err != nil {
				return d, err
			}
			if body, err = io.ReadAll(r); err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
				return d, err
			}
		}
		if !bytes.Contains(body, []byte("BT")) {
			continue
		}
		var text []string
		for _, s := range shown.FindAllSubmatch(body, -1) {
			text = append(text, utf16be(unescape(s[1])))
		}
		d.Text = append(d.Text, strings.Join(text, "\n"))
	}
	return d, nil
}

// unescape undoes a PDF literal string's backslash escapes (fpdf writes \\, \( , \)
// and \r).
func unescape(b []byte) []byte {
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); i++ {
		if b[i] != '\\' || i+1 == len(b) {
			out = append(out, b[i])
			continue
		}
		i++
		switch b[i] {
		case 'r':
			out = append(out, '\r')
		case 'n':
			out = append(out, '\n')
		default:
			out = append(out, b[i])
		}
	}
	return out
}

func utf16be(b []byte) string {
	u := make([]uint16, len(b)/2)
	for i := range u {
		u[i] = uint16(b[2*i])<<8 | uint16(b[2*i+1])
	}
	return string(utf16.Decode(u))
}
