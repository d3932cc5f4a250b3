package remedy_test

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestLayout holds the tree to the levels the README's "Development" section and
// ARCHITECTURE.md describe: the leaf libraries under internal/ import nothing of remedy's but
// one another; the contract (the root package) imports only leaf libraries; the server, the
// conformance kit and the go-retryablehttp adapter are built on the contract and import nothing
// of package client; the libraries a user imports import no example and no test kit, but for
// server/storetest, which is a test kit itself; and an example imports nothing under internal/,
// so that it builds when copied into a module of its own (the examples that are modules of
// their own included). Only code that is built into a package counts (tests may use the kits
// and the client).
func TestLayout(t *testing.T) {
	const module = "github.com/remedy-go/remedy"
	leaves := map[string]bool{}
	entries, err := os.ReadDir("internal")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.IsDir() && e.Name() != "testkit" {
			leaves["internal/"+e.Name()] = true
		}
	}
	if len(leaves) == 0 {
		t.Fatal("no leaf libraries found under internal/")
	}
	under := func(dir, prefix string) bool { return dir == prefix || strings.HasPrefix(dir, prefix+"/") }
	err = filepath.WalkDir(".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); p != "." && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules") {
				return filepath.SkipDir
			}
			if p != "." && !under(filepath.ToSlash(p), "examples") {
				if _, err := os.Stat(filepath.Join(p, "go.mod")); err == nil {
					return filepath.SkipDir // a module of its own
				}
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), p, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		dir := filepath.ToSlash(filepath.Dir(p))
		for _, spec := range f.Imports {
			imp, _ := strconv.Unquote(spec.Path.Value)
			if !strings.HasPrefix(imp, module) {
				continue
			}
			target := strings.TrimPrefix(strings.TrimPrefix(imp, module), "/")
			switch {
			case leaves[topTwo(dir)] && !leaves[topTwo(target)]:
				t.Errorf("%s: the leaf library %s imports %s", p, topTwo(dir), imp)
			case under(dir, "examples") && under(target, "internal"):
				t.Errorf("%s: an example imports %s: copied into a module of its own, it would not build", p, imp)
			case under(dir, "internal") || under(dir, "cmd") || under(dir, "examples") || dir == "server/storetest":
				// applications and kits may import anything
			case under(target, "examples") || under(target, "internal/testkit"):
				t.Errorf("%s: a library imports %s (an example or a test kit)", p, imp)
			case dir == "." && !leaves[topTwo(target)]:
				t.Errorf("%s: the contract imports %s, which is not a leaf library", p, imp)
			case contractOnly(dir) && under(target, "client"):
				t.Errorf("%s: %s imports %s: it is built on the contract alone", p, dir, imp)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// contractOnly reports whether the package in dir is one of those built on the contract alone.
func contractOnly(dir string) bool {
	for _, p := range [...]string{"server", "conformance", "retryable"} {
		if dir == p || strings.HasPrefix(dir, p+"/") {
			return true
		}
	}
	return false
}

// topTwo is the first two elements of a slash-separated path ("internal/jsonw" of
// "internal/jsonw/x").
func topTwo(p string) string {
	parts := strings.SplitN(p, "/", 3)
	if len(parts) < 2 {
		return p
	}
	return path.Join(parts[0], parts[1])
}
