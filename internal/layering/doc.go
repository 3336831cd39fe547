// Package layering holds the test that checks the import rules between boxoffice's
// packages against one table (layering_test.go): which packages may import which.
// It has no code of its own and nothing imports it.
package layering
