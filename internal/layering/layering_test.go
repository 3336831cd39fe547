package layering_test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// rule forbids some packages to import others. Patterns are import paths; one that
// ends in /... stands for the path and every package below it, as go list reads it.
type rule struct {
	from   []string // the importing packages
	except []string // packages of from the rule does not bind
	forbid []string // the imports refused
	allow  []string // imports of forbid let through all the same
	tests  bool     // the packages' tests are bound too
	why    string
}

// rules are the layers, one row a rule: add a row to add one.
var rules = []rule{
	{
		from: []string{"boxoffice/cmd/..."}, except: []string{"boxoffice/cmd/boxoffice"},
		forbid: []string{"boxoffice/..."}, allow: []string{"boxoffice/internal/benchkit", "boxoffice/internal/apptest"},
		tests: true,
		why:   "the lab measures the program through one door, the bench kit (and apptest in its tests), never by importing its packages",
	},
	{
		from: []string{"boxoffice/..."}, except: []string{"boxoffice/cmd/bench", "boxoffice/cmd/onsale", "boxoffice/internal/benchkit"},
		forbid: []string{"boxoffice/internal/benchkit"},
		tests:  true,
		why:    "the bench kit is the lab's: the product never depends on it",
	},
}

// pkg is a package and what it and its tests import.
type pkg struct {
	path        string
	imports     []string
	testImports []string // of its tests, in the package and beside it (_test)
}

// TestLayers checks every package of the module against the rules.
func TestLayers(t *testing.T) {
	t.Parallel()
	pkgs := list(t)
	if len(pkgs) < 10 || !slices.ContainsFunc(pkgs, func(p pkg) bool { return p.path == "boxoffice/cmd/bench" }) {
		t.Fatalf("go list found %d packages, without boxoffice/cmd/bench: not the module", len(pkgs))
	}
	for _, v := range violations(pkgs, rules) {
		t.Error(v)
	}
}

// TestLayersCatch feeds the check packages that break each rule, and the same
// packages within it: the first must be caught, the second not.
func TestLayersCatch(t *testing.T) {
	t.Parallel()
	bad := []pkg{
		{path: "boxoffice/cmd/onsale", imports: []string{"fmt", "boxoffice/internal/benchkit", "boxoffice/internal/waitroom"}},
		{path: "boxoffice/cmd/bench", testImports: []string{"boxoffice/internal/dbtest"}},
		{path: "boxoffice/web", imports: []string{"boxoffice/internal/benchkit"}},
	}
	got := violations(bad, rules)
	if len(got) != 3 || !strings.Contains(got[0], "internal/waitroom") || !strings.Contains(got[1], "internal/dbtest") || !strings.Contains(got[2], "boxoffice/web") {
		t.Errorf("got %q, want the three imports named", got)
	}
	good := []pkg{
		{path: "boxoffice/cmd/onsale", imports: []string{"fmt", "boxoffice/internal/benchkit"}, testImports: []string{"boxoffice/internal/apptest"}},
		{path: "boxoffice/cmd/boxoffice", imports: []string{"boxoffice/internal/app", "boxoffice/web"}},
		{path: "boxoffice/internal/benchkit", imports: []string{"boxoffice/internal/app", "boxoffice/web"}},
	}
	if got := violations(good, rules); len(got) != 0 {
		t.Errorf("got %q, want none", got)
	}
}

// list reads the module's packages and their imports with go list.
func list(t *testing.T) []pkg {
	t.Helper()
	out, err := exec.Command("go", "list", "-f",
		`{{.ImportPath}}|{{join .Imports " "}}|{{join .TestImports " "}} {{join .XTestImports " "}}`, "boxoffice/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var pkgs []pkg
	for line := range strings.SplitSeq(strings.TrimSpace(string(out)), "\n") {
		f := strings.Split(line, "|")
		if len(f) != 3 {
			t.Fatalf("go list: %q", line)
		}
		pkgs = append(pkgs, pkg{path: f[0], imports: strings.Fields(f[1]), testImports: strings.Fields(f[2])})
	}
	return pkgs
}

// violations lists each import of pkgs that a rule refuses, with the rule's reason.
func violations(pkgs []pkg, rules []rule) []string {
	var out []string
	for _, r := range rules {
		for _, p := range pkgs {
			if !matchAny(r.from, p.path) || matchAny(r.except, p.path) {
				continue
			}
			imports := p.imports
			if r.tests {
				imports = append(slices.Clone(imports), p.testImports...)
			}
			for _, imp := range imports {
				if matchAny(r.forbid, imp) && !matchAny(r.allow, imp) {
					out = append(out, p.path+" imports "+imp+": "+r.why)
				}
			}
		}
	}
	return out
}

func matchAny(patterns []string, path string) bool {
	return slices.ContainsFunc(patterns, func(pat string) bool {
		if base, ok := strings.CutSuffix(pat, "/..."); ok {
			return path == base || strings.HasPrefix(path, base+"/")
		}
		return path == pat
	})
}
