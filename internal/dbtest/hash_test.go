package dbtest

import (
	"testing"
	"testing/fstest"
)

// TestFilesHashCoversFunctions: the template's name changes when a function file
// changes, not only a numbered migration, or River's version: a test would otherwise
// run on a template with an old function body.
func TestFilesHashCoversFunctions(t *testing.T) {
	t.Parallel()
	base := fstest.MapFS{
		"00001_init.sql":           {Data: []byte("CREATE TABLE t (id int);")},
		"functions/hold_seats.sql": {Data: []byte("CREATE OR REPLACE FUNCTION f() RETURNS int LANGUAGE sql AS $$ SELECT 1 $$;")},
	}
	want, err := filesHash(base, 6)
	if err != nil {
		t.Fatal(err)
	}
	changed := fstest.MapFS{}
	for k, v := range base {
		changed[k] = v
	}
	changed["functions/hold_seats.sql"] = &fstest.MapFile{Data: []byte("CREATE OR REPLACE FUNCTION f() RETURNS int LANGUAGE sql AS $$ SELECT 2 $$;")}
	for name, c := range map[string]struct {
		fsys  fstest.MapFS
		river int
	}{"a function file changed": {changed, 6}, "River upgraded": {base, 7}} {
		if got, err := filesHash(c.fsys, c.river); err != nil || got == want {
			t.Errorf("%s: hash %s (%v), want other than %s", name, got, err, want)
		}
	}
	if again, err := filesHash(base, 6); err != nil || again != want {
		t.Errorf("the same files: hash %s (%v), want %s again", again, err, want)
	}
}
