package layering_test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// rule forbids some packages to import others. Patterns are import paths; one that
// ends in /... stands for the path and every package below it, as go list reads it;
// "..." alone stands for every import, "std" for the standard library's.
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
		from: []string{"boxoffice/..."}, except: []string{"boxoffice/cmd/bench", "boxoffice/cmd/onsale", "boxoffice/internal/benchkit", "boxoffice/deploy/cluster/drill"},
		forbid: []string{"boxoffice/internal/benchkit"},
		tests:  true,
		why:    "the bench kit is the lab's (the benchmarks, the simulator and the cluster drills): the product never depends on it",
	},
	{
		from: []string{"boxoffice/..."}, except: []string{"boxoffice/cmd/boxoffice", "boxoffice/internal/apptest", "boxoffice/internal/benchkit"},
		forbid: []string{"boxoffice/internal/app"},
		tests:  true,
		why:    "the composition root sits on top: only serve, apptest and the bench kit build the program",
	},
	{
		from: []string{"boxoffice/..."}, except: []string{"boxoffice/web", "boxoffice/internal/app"},
		forbid: []string{"boxoffice/web"},
		tests:  true,
		why:    "the handler is built by the composition root (App.Handler): no domain package, command or test builds one of its own",
	},
	{
		from: []string{"boxoffice/web/...", "boxoffice/views/...", "boxoffice/cmd/...", "boxoffice/deploy/...",
			"boxoffice/internal/app", "boxoffice/internal/apptest", "boxoffice/internal/benchkit"},
		forbid: []string{"boxoffice/internal/db"},
		tests:  true,
		why:    "generated SQL stays behind the domain packages, which own their transactions and translate its errors",
	},
	{
		from: []string{"boxoffice/views/..."}, forbid: []string{"..."}, allow: []string{"std", "github.com/a-h/templ/..."},
		tests: true,
		why:   "views are templ components over plain view models: no HTTP, no database, no domain package",
	},
	{
		from: []string{"boxoffice/..."}, except: []string{"boxoffice/web"},
		forbid: []string{"github.com/labstack/..."},
		tests:  true,
		why:    "web is the only package that imports Echo, so that its v5 is a move within one package",
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

// TestLayersCatch feeds the check packages that break each rule, one at a time, and
// the packages as they are meant to be: each of the first must be caught, naming the
// import, and none of the second.
func TestLayersCatch(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		bad  pkg
		want string // the import named
		n    int    // rules broken
	}{
		{pkg{path: "boxoffice/cmd/onsale", imports: []string{"fmt", "boxoffice/internal/benchkit", "boxoffice/internal/waitroom"}}, "internal/waitroom", 1},
		{pkg{path: "boxoffice/cmd/bench", testImports: []string{"boxoffice/internal/dbtest"}}, "internal/dbtest", 1},
		{pkg{path: "boxoffice/web", imports: []string{"boxoffice/internal/benchkit"}}, "internal/benchkit", 1},
		{pkg{path: "boxoffice/web", imports: []string{"boxoffice/internal/app"}}, "internal/app", 1},
		{pkg{path: "boxoffice/web", testImports: []string{"boxoffice/internal/app"}}, "internal/app", 1},
		{pkg{path: "boxoffice/web", imports: []string{"boxoffice/internal/db"}}, "internal/db", 1},
		{pkg{path: "boxoffice/cmd/boxoffice", imports: []string{"boxoffice/internal/db"}}, "internal/db", 1},
		{pkg{path: "boxoffice/internal/booking", imports: []string{"boxoffice/web"}}, "boxoffice/web", 1},
		{pkg{path: "boxoffice/cmd/boxoffice", imports: []string{"boxoffice/web"}}, "boxoffice/web", 1},
		{pkg{path: "boxoffice/internal/catalog", testImports: []string{"boxoffice/internal/app"}}, "internal/app", 1},
		{pkg{path: "boxoffice/views", imports: []string{"boxoffice/internal/booking"}}, "internal/booking", 1},
		{pkg{path: "boxoffice/views", imports: []string{"github.com/labstack/echo/v4"}}, "labstack/echo", 2},
		{pkg{path: "boxoffice/views", imports: []string{"golang.org/x/text/language"}}, "golang.org/x/text", 1},
		{pkg{path: "boxoffice/internal/booking", imports: []string{"github.com/labstack/echo/v4/middleware"}}, "labstack/echo", 1},
	} {
		got := violations([]pkg{tc.bad}, rules)
		if len(got) != tc.n || !strings.Contains(got[0], tc.bad.path+" imports ") || !strings.Contains(got[0], tc.want) {
			t.Errorf("%s importing %s: got %q, want %d rule(s) naming it", tc.bad.path, tc.want, got, tc.n)
		}
	}
	good := []pkg{
		{path: "boxoffice/cmd/onsale", imports: []string{"fmt", "boxoffice/internal/benchkit"}, testImports: []string{"boxoffice/internal/apptest"}},
		{path: "boxoffice/cmd/boxoffice", imports: []string{"boxoffice/internal/app", "boxoffice/internal/config"}},
		{path: "boxoffice/internal/benchkit", imports: []string{"boxoffice/internal/app"}},
		{path: "boxoffice/internal/app", imports: []string{"boxoffice/web", "boxoffice/internal/booking"}},
		{path: "boxoffice/web", imports: []string{"boxoffice/internal/booking", "boxoffice/internal/session", "boxoffice/views", "github.com/labstack/echo/v4"},
			testImports: []string{"boxoffice/internal/apptest", "boxoffice/web", "github.com/labstack/echo/v4"}},
		{path: "boxoffice/views", imports: []string{"encoding/json", "strconv", "github.com/a-h/templ", "github.com/a-h/templ/runtime"}},
		{path: "boxoffice/internal/booking", imports: []string{"boxoffice/internal/db", "github.com/jackc/pgx/v5"}},
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
		switch pat {
		case "...":
			return true
		case "std": // no dot in the first element: golang.org/x/… and github.com/… are not
			first, _, _ := strings.Cut(path, "/")
			return !strings.Contains(first, ".") && first != "boxoffice"
		}
		if base, ok := strings.CutSuffix(pat, "/..."); ok {
			return path == base || strings.HasPrefix(path, base+"/")
		}
		return path == pat
	})
}
