package hostinfo

import (
	"context"

	"github.com/phptune/phptune/internal/model/results"
)

// Functions only this package's tests use.

// Collect reads the environment. Programs that are missing are left out of
// Versions; nothing here fails a run.
func Collect(ctx context.Context) *results.Environment { return CollectCached(ctx, "") }
