package phpbuild

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// checkExtensions loads every distro extension (mods-available, in conf.d
// order) into the built php-cli, run as the build account.
func (b *builder) checkExtensions(ctx context.Context, log io.Writer) error {
	avail := filepath.Join("/etc/php", b.phpName, "mods-available")
	ents, err := os.ReadDir(avail)
	if err != nil {
		return fmt.Errorf("reading the distro's extension list %s: %v", avail, err)
	}
	var mods []Module
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), ".ini") {
			continue
		}
		data, err := os.ReadFile(filepath.Join(avail, e.Name()))
		if err != nil {
			continue
		}
		if m, ok := ParseModIni(string(data)); ok {
			// opcache is always the build's own (labs load it, see ForLab).
			if slices.Contains(b.rec.Built, m.Name) || m.Name == "opcache" {
				m.Path = filepath.Join(b.src, "modules", m.Name+".so")
				mods = append(mods, m)
			} else if b.foreign() {
				continue // the distro's are built for another module API
			} else if _, err := os.Stat(filepath.Join(b.rec.ExtDir, m.Name+".so")); err == nil {
				mods = append(mods, m)
			}
		}
	}
	SortModules(mods)
	php := filepath.Join(b.src, "sapi", "cli", "php")
	out, err := b.output(ctx, b.src, nil, php, CheckArgs(b.rec.ExtDir, mods)...)
	fmt.Fprint(log, out)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("the built php-cli failed the extension check: %v: %s", err, lastLines(out, 5))
	}
	b.rec.Extensions = ParseCheckOutput(out, mods)
	for _, name := range b.rec.Unavailable {
		b.rec.Extensions = append(b.rec.Extensions, ExtResult{Name: name, Reason: UnavailableReason(b.target, b.phpName)})
	}
	failed := 0
	for i, r := range b.rec.Extensions {
		b.rec.Extensions[i].Own = slices.Contains(b.rec.Built, r.Name) || r.Name == "opcache"
		if !r.Loaded && !slices.Contains(b.rec.Unavailable, r.Name) {
			failed++
			fmt.Fprintf(log, "NOT LOADED %s: %s\n", r.Name, r.Reason)
		}
	}
	if failed > 0 && OlderThan(b.rec.SourceVersion, b.installed) {
		b.rec.ExtNote = fmt.Sprintf("the distro's extensions were built for the installed PHP %s; this source is %s, older: those that need core symbols added since (\"undefined symbol\") cannot load into it", b.installed, b.rec.SourceVersion)
	}
	// The build's own opcache, which labs of the build load instead of the
	// distro's (see ConfigureArgs): a build without a working one fails.
	own := []Module{{Name: "opcache", Zend: true, Path: filepath.Join(b.src, "modules", "opcache.so")}}
	out, err = b.output(ctx, b.src, nil, php, CheckArgs(b.rec.ExtDir, own)...)
	fmt.Fprint(log, out)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if r := ParseCheckOutput(out, own)[0]; err != nil || !r.Loaded {
		return fmt.Errorf("the build's own opcache does not load into its php: %s (%v)", r.Reason, err)
	}
	return nil
}
