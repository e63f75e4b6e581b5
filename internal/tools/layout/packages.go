package main

import (
	"go/doc"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
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
		synopsis, ok, err := packageSynopsis(path)
		if err != nil || !ok {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		pkgs = append(pkgs, Package{Dir: filepath.ToSlash(rel), Synopsis: synopsis})
		return nil
	})
	sort.Slice(pkgs, func(i, j int) bool { return pkgs[i].Dir < pkgs[j].Dir })
	return pkgs, err
}

// packageSynopsis parses the package clauses of dir's non-test Go files and
// returns the first sentence of the first doc comment found; ok is false when
// dir holds no such file.
func packageSynopsis(dir string) (synopsis string, ok bool, err error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return "", false, err
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
	for _, n := range names {
		f, err := parser.ParseFile(fset, filepath.Join(dir, n), nil, parser.PackageClauseOnly|parser.ParseComments)
		if err != nil {
			return "", false, err
		}
		ok = true
		if f.Doc != nil {
			return new(doc.Package).Synopsis(f.Doc.Text()), true, nil
		}
	}
	return "", ok, nil
}
