package speedprobe

import (
	"context"
	"testing"
	"time"
)

func TestMedian(t *testing.T) {
	rs := []Reading{{0.05, 9}, {0.1, 1}, {0.2, 3}, {0.3, 2}, {0.4, 0}, {0.5, 5}}
	for _, c := range []struct {
		from, to float64
		want     float64
		n        int
	}{
		{0, 0, 3, 5},       // 9 1 3 2 5 (the zero reading is left out)
		{0.05, 0, 2.5, 4},  // after 0.05: 1 3 2 5
		{0.1, 0.3, 2.5, 2}, // 3 2
		{0.5, 0, 0, 0},     // nothing after the last
		{0, 0.05, 9, 1},    // the first alone
	} {
		got, n := Median(rs, c.from, c.to)
		if got != c.want || n != c.n {
			t.Errorf("Median(%v, %v) = %v, %d; want %v, %d", c.from, c.to, got, n, c.want, c.n)
		}
	}
}

func TestChainIsOneCycle(t *testing.T) {
	c := newChain()
	seen, idx := 0, uint32(0)
	for {
		idx = c.next[idx]
		seen++
		if idx == 0 {
			break
		}
		if seen > len(c.next) {
			t.Fatal("the chain does not come back to 0")
		}
	}
	if seen != len(c.next) {
		t.Fatalf("cycle of %d, want %d: part of the buffer is never visited", seen, len(c.next))
	}
}

func TestProbeReads(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the probe for half a second")
	}
	p := Start(context.Background(), time.Now())
	time.Sleep(550 * time.Millisecond)
	rs := p.Stop()
	if len(rs) < 3 {
		t.Fatalf("%d readings in 550 ms, want >= 3", len(rs))
	}
	ms, n := Median(rs, 0, 0)
	if ms <= 0 || ms > 1000 || n != len(rs) {
		t.Fatalf("median %v ms of %d", ms, n)
	}
	// Stop is final: no reading after it.
	time.Sleep(150 * time.Millisecond)
	if len(p.Readings()) != len(rs) {
		t.Fatal("readings after Stop")
	}
}
