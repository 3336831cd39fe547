package migrations

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"path"

	"github.com/jackc/pgx/v5"
)

// FunctionsDir is the folder of FS that holds the current body of each function a
// query or another function calls: one file per rule, each a CREATE OR REPLACE that
// can run again. Up applies them in name order after the numbered migrations, so a
// body here replaces the one a numbered migration created. A numbered migration must
// not use these functions: on a fresh database they do not exist yet while it runs.
const FunctionsDir = "functions"

// FunctionFiles returns the paths in FS of the function files, in the order Up
// applies them.
func FunctionFiles() ([]string, error) {
	return fs.Glob(FS, path.Join(FunctionsDir, "*.sql")) // sorted by name
}

// functionsHash is a SHA-256 over the function files' names and contents.
func functionsHash(files []string) (string, error) {
	h := sha256.New()
	for _, f := range files {
		b, err := fs.ReadFile(FS, f)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "%s\x00%d\x00", f, len(b))
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// applyFunctions applies the function files in one transaction on conn (which holds
// the migration lock), when they differ from the ones applied last (function_files)
// or migrated says a numbered migration just ran. It reports whether it applied them.
func applyFunctions(ctx context.Context, conn *pgx.Conn, migrated bool) (bool, error) {
	files, err := FunctionFiles()
	if err != nil {
		return false, err
	}
	hash, err := functionsHash(files)
	if err != nil {
		return false, err
	}
	applied := false
	err = pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		var last string
		err := tx.QueryRow(ctx, "SELECT hash FROM function_files").Scan(&last)
		if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return err
		}
		if last == hash && !migrated {
			return nil
		}
		for _, f := range files {
			b, err := fs.ReadFile(FS, f)
			if err != nil {
				return err
			}
			// No arguments: pgx sends the file by the simple protocol, several
			// statements at once.
			if _, err := tx.Exec(ctx, string(b)); err != nil {
				return fmt.Errorf("%s: %w", f, err)
			}
		}
		_, err = tx.Exec(ctx, `INSERT INTO function_files (hash) VALUES ($1)
			ON CONFLICT (one) DO UPDATE SET hash = EXCLUDED.hash, applied_at = now()`, hash)
		applied = err == nil
		return err
	})
	return applied, err
}
