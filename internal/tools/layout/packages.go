package main

import (
	"go/doc"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// ReadPackages walks the module rooted at root and returns each directory
// holding non-test Go files with the first sentence of its package's doc
// comment, sorted by directory. Hidden directories, testdata and vendor are
// skipped, as the go command skips them.
func ReadPackages(root string) ([]Package, error) {
	var pkgs []Package
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		name := d.Name()
		if path != root && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata" || name == "vendor") {
			return filepath.SkipDir
		}
		synopsis, imports, ok, err := readPackage(path)
		if err != nil || !ok {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		pkgs = append(pkgs, Package{Dir: filepath.ToSlash(rel), Synopsis: synopsis, Imports: imports})
		return nil
	})
	sort.Slice(pkgs, func(i, j int) bool { return pkgs[i].Dir < pkgs[j].Dir })
	return pkgs, err
}

// modulePath prefixes the module's own import paths.
const modulePath = "github.com/phptune/phptune/"

// readPackage parses the package clauses and imports of dir's non-test Go
// files and returns the first sentence of the first doc comment found and
// the module's own packages they import, as module-relative directories
// ("internal/model/knob"); ok is false when dir holds no such file.
func readPackage(dir string) (synopsis string, imports []string, ok bool, err error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return "", nil, false, err
	}
	var names []string
	for _, e := range entries {
		n := e.Name()
		if e.Type().IsRegular() && strings.HasSuffix(n, ".go") && !strings.HasSuffix(n, "_test.go") {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	fset := token.NewFileSet()
	seen := map[string]bool{}
	for _, n := range names {
		f, err := parser.ParseFile(fset, filepath.Join(dir, n), nil, parser.ImportsOnly|parser.ParseComments)
		if err != nil {
			return "", nil, false, err
		}
		ok = true
		if f.Doc != nil && synopsis == "" {
			synopsis = new(doc.Package).Synopsis(f.Doc.Text())
		}
		for _, imp := range f.Imports {
			path, err := strconv.Unquote(imp.Path.Value)
			if err == nil && strings.HasPrefix(path, modulePath) && !seen[path] {
				seen[path] = true
				imports = append(imports, strings.TrimPrefix(path, modulePath))
			}
		}
	}
	sort.Strings(imports)
	return synopsis, imports, ok, nil
}
