package servercompare

import "github.com/phptune/phptune/internal/model/results"

// Functions only this package's tests use.

// Faster reports whether r's whole interval lies above 1.
func Faster(r *results.Ratio) bool { return r != nil && r.High > 0 && r.Low > 1 }
