package observe

import (
	"context"
	"testing"
	"time"
)

// BenchmarkSample measures one sample of a real php-fpm pool (4 workers)
// with the fpm status page and its socket queue, all processes scanned.
// CPU per op at a 1 s interval is the sampler's cost in core-seconds per
// second: 5 ms/op is 0.5% of a core.
func BenchmarkSample(b *testing.B) {
	p := startFPM(b, 0)
	o := p.observer(b, time.Second)
	if err := o.Baseline(); err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.ResetTimer()
	for b.Loop() {
		s := o.Sample(ctx)
		if len(s.Errors) > 0 {
			b.Fatal(s.Errors)
		}
	}
}
