// Package apps holds the PHP apps embedded in phptune, which the lab serves:
// hello, phpinfo, strings and io (WordPress comes from the distro's package,
// see package wordpress).
package apps

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/phptune/phptune/internal/base/confpath"
)

//go:embed files
var files embed.FS

// App describes an embedded or external app.
type App struct {
	Name        string
	Description string
	NeedsDB     bool
	// Marker is a string the app's front page contains when it works.
	Marker string
	// FrontController routes unknown paths to index.php (WordPress).
	FrontController bool
}

var catalog = []App{
	{Name: "hello", Description: "echoes Hello, world! (the stack's own cost)", Marker: "Hello, world!"},
	{Name: "phpinfo", Description: "phpinfo() page: a larger page of PHP output, no database", Marker: "PHP Version"},
	{Name: "strings", Description: "CPU-bound string processing, a few ms per request", Marker: "strings ok"},
	{Name: "io", Description: "waits 20 ms on MariaDB per request (SELECT SLEEP(0.02))", NeedsDB: true, Marker: "io ok answer=42"},
	{Name: "wordpress", Description: "WordPress from the distro's package, seeded with posts, pages and comments", NeedsDB: true, Marker: "phptune lab", FrontController: true},
}

// Catalog lists the built-in apps.
func Catalog() []App { return append([]App(nil), catalog...) }

// Lookup finds a built-in app by name.
func Lookup(name string) (App, error) {
	var names []string
	for _, a := range catalog {
		if a.Name == name {
			return a, nil
		}
		names = append(names, a.Name)
	}
	sort.Strings(names)
	return App{}, fmt.Errorf("unknown app %q; choose one of %s, or serve your own with --docroot DIR", name, strings.Join(names, ", "))
}

// Install copies the embedded app name (not wordpress) into dir.
func Install(name, dir string) error {
	sub, err := fs.Sub(files, "files/"+name)
	if err != nil {
		return err
	}
	if _, err := fs.Stat(sub, "index.php"); err != nil {
		return fmt.Errorf("app %s has no embedded files", name)
	}
	return fs.WalkDir(sub, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		dst := filepath.Join(dir, p)
		if d.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		data, err := fs.ReadFile(sub, p)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, data, 0o644)
	})
}

// CheckDocRoot refuses a user docroot that cannot be served: a path that
// nginx.conf cannot carry (nginx's root reads '$' as a variable; control and
// invisible characters are refused everywhere, see package confpath),
// missing, not a directory, or without any PHP file. dir is absolute.
func CheckDocRoot(dir string) error {
	if err := confpath.NginxVariables.Check(dir); err != nil {
		var pe *confpath.Error
		if errors.As(err, &pe) && pe.Char() != "" {
			return fmt.Errorf("--docroot: %w; rename the directory, or point --docroot at a symlink to it whose path has no %s", err, pe.Char())
		}
		return fmt.Errorf("--docroot: %w", err)
	}
	st, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("--docroot %s: %v", dir, err)
	}
	if !st.IsDir() {
		return fmt.Errorf("--docroot %s is not a directory", dir)
	}
	found := false
	errStop := fmt.Errorf("found")
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".php") {
			found = true
			return errStop
		}
		return nil
	})
	if !found {
		return fmt.Errorf("--docroot %s has no .php file; point it at your app's public directory (the one with index.php)", dir)
	}
	return nil
}
