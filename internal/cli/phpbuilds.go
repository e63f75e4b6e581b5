package cli

import (
	"strings"

	"github.com/phptune/phptune/internal/build/phpbuild"
	"github.com/phptune/phptune/internal/build/phproot"
	"github.com/phptune/phptune/internal/model/knob"
	"github.com/phptune/phptune/internal/model/results"
	"github.com/phptune/phptune/internal/stack/lab"
)

// buildsOf names every PHP build the configurations ran (php.build other
// than distro), from the build cache, in the order first met.
func buildsOf(configs []map[string]string) []results.PHPBuild {
	var out []results.PHPBuild
	seen := map[string]bool{}
	for _, c := range configs {
		id := c[knob.BuildKnob]
		if id == "" || id == "distro" || seen[id] {
			continue
		}
		seen[id] = true
		if v, ok := phproot.BuildVersion(id); ok {
			out = append(out, rootBuild(id, v))
			continue
		}
		r, err := phpbuild.Load(id)
		if err != nil {
			out = append(out, results.PHPBuild{ID: id, Missing: true})
			continue
		}
		out = append(out, results.PHPBuild{ID: r.ID, PHPVersion: r.SourceVersion, Variant: r.Variant, Minimal: r.Minimal,
			Training: r.Training, CFLAGS: r.CFLAGS, LDFLAGS: r.LDFLAGS, Older: r.Older, Warning: r.SecurityNote()})
	}
	return out
}

// rootBuild is a PHP root's entry (php.build=debian-8.4): Debian's own
// binaries, not built here.
func rootBuild(id, version string) results.PHPBuild {
	r, err := phproot.Find(lab.Home(), version)
	if err != nil {
		return results.PHPBuild{ID: id, Missing: true}
	}
	php := r.Manifest.PHP
	if f := strings.Fields(php); len(f) > 1 {
		php = f[1]
	}
	return results.PHPBuild{ID: id, PHPVersion: php, Variant: "Debian " + r.Manifest.Debian + "'s own php" + version + "-fpm (phptune php add)"}
}
