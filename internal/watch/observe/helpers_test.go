package observe

import (
	"slices"

	"github.com/phptune/phptune/internal/model/results"
)

// Functions only this package's tests use.

// Samples returns a copy of the samples taken so far.
func (o *Observer) Samples() []results.Sample {
	o.mu.Lock()
	defer o.mu.Unlock()
	return slices.Clone(o.samples)
}
