package labstack

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/phptune/phptune/internal/model/results"
	"github.com/phptune/phptune/internal/stack/lab"
	"github.com/phptune/phptune/internal/stack/workload"
	"github.com/phptune/phptune/internal/traffic/load"
)

// flagGenerator is a Generator that only names its bench flags.
type flagGenerator string

func (flagGenerator) Run(context.Context, load.Options) (*results.Bench, error) { return nil, nil }
func (g flagGenerator) BenchFlags() string                                      { return string(g) }

func TestStackCommandNamesItsGenerator(t *testing.T) {
	w := workload.Workload{Name: workload.Front, Requests: []load.Request{{Method: "GET", Path: "/"}}}
	for _, c := range []struct {
		name string
		gen  Generator
		want string
	}{
		{"default", nil, "phptune bench --lab l1 --app-path / -c 8 -d 5s --warmup 1s"},
		{"phptune's own", OwnGenerator{}, "phptune bench --lab l1 --app-path / -c 8 -d 5s --warmup 1s"},
		{"another engine", flagGenerator("--engine locust --workers 2"), "phptune bench --lab l1 --app-path / -c 8 -d 5s --warmup 1s --engine locust --workers 2"},
	} {
		s := New(&lab.Lab{Name: "l1"}, w)
		s.Generator = c.gen
		if got := s.command(8, 5*time.Second, time.Second); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
		if _, ok := s.generator().(OwnGenerator); ok != (c.gen == nil || strings.HasPrefix(c.name, "phptune")) {
			t.Errorf("%s: generator %T", c.name, s.generator())
		}
	}
}
