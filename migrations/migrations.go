// Package migrations embeds the schema: the numbered SQL migrations that goose applies
// and the current bodies of the database's functions (functions/), which Up applies
// after them; sqlc reads both as the schema.
//
// It imports no package of boxoffice: the schema is below everything else.
package migrations

import "embed"

// FS holds every *.sql migration in this folder, and the function files under
// functions/ (goose reads only the top level).
//
//go:embed *.sql functions/*.sql
var FS embed.FS
