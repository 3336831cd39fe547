// Package migrations embeds the numbered SQL migrations that goose applies and sqlc
// reads as the schema.
//
// It imports no package of boxoffice: the schema is below everything else.
package migrations

import "embed"

// FS holds every *.sql migration in this folder.
//
//go:embed *.sql
var FS embed.FS
