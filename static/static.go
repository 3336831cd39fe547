// Package static embeds the stylesheets, scripts and images, and serves each under a
// name that carries a hash of its content, so that browsers and the CDN may keep it
// forever: a changed file gets a new URL.
//
// It imports only the standard library.
package static

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strings"
)

//go:embed css js img
var files embed.FS

type asset struct {
	body        []byte
	contentType string
}

var (
	urls   = map[string]string{} // "css/app.css" -> "/static/css/app.1a2b3c4d.css"
	byURL  = map[string]asset{}
	prefix = "/static/"
)

func init() {
	// Reading an embedded FS cannot fail; the table is built once, before serving.
	_ = fs.WalkDir(files, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || path.Ext(p) == ".md" {
			return err
		}
		body, err := files.ReadFile(p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(body)
		ext := path.Ext(p)
		u := prefix + strings.TrimSuffix(p, ext) + "." + hex.EncodeToString(sum[:4]) + ext
		urls[p] = u
		byURL[u] = asset{body: body, contentType: mime.TypeByExtension(ext)}
		return nil
	})
}

// URL returns the hashed URL of an embedded file, e.g. URL("css/app.css").
func URL(name string) string { return urls[name] }

// Handler serves the hashed URLs, marked immutable.
func Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a, ok := byURL[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", a.contentType)
		w.Header().Set("Cache-Control", "public, max-age=31536000, immutable")
		_, _ = w.Write(a.body)
	})
}
