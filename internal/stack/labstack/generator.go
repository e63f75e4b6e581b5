package labstack

import (
	"context"

	"github.com/phptune/phptune/internal/model/results"
	"github.com/phptune/phptune/internal/traffic/load"
)

// Generator is what loads the lab in Stack.Measure and Stack.MeasureRate:
// phptune's own generator (OwnGenerator) or another engine that takes the
// same options and returns the same record (Locust: locust.Engine). It runs
// one measurement: o.Warmup of load that is not counted, then o.Duration
// that is, calling o.OnMeasure when the counted part starts.
type Generator interface {
	Run(ctx context.Context, o load.Options) (*results.Bench, error)
	// BenchFlags are the flags of phptune bench that choose this generator
	// ("" for phptune's own), for the record's command line.
	BenchFlags() string
}

// OwnGenerator is phptune's own generator (package load), the default.
type OwnGenerator struct{}

// Run runs o on phptune's generator.
func (OwnGenerator) Run(ctx context.Context, o load.Options) (*results.Bench, error) {
	return load.Run(ctx, o)
}

// BenchFlags is "": bench's default engine.
func (OwnGenerator) BenchFlags() string { return "" }

// generator is the stack's generator, phptune's own when none is set.
func (s *Stack) generator() Generator {
	if s.Generator == nil {
		return OwnGenerator{}
	}
	return s.Generator
}
