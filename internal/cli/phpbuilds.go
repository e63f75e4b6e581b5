package cli

import (
	"github.com/phptune/phptune/internal/build/phpbuild"
	"github.com/phptune/phptune/internal/model/knob"
	"github.com/phptune/phptune/internal/model/results"
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
