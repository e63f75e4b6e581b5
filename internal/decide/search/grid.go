package search

import "fmt"

// DefaultGridChildren are the pool sizes of the exhaustive grid: dense where
// the defaults and CPU-bound optima live, then roughly geometric.
var DefaultGridChildren = []int{1, 2, 3, 4, 5, 6, 8, 10, 12, 16, 20, 24, 32, 40, 48, 64}

// GridOptions configure the exhaustive grid.
type GridOptions struct {
	Options
	PMs                []string // default static, dynamic, ondemand
	Children           []int    // default DefaultGridChildren
	ValidateTimestamps []string // default on, off
}

// Grid measures every combination of pm × max_children ×
// opcache.validate_timestamps once, in a fixed order, and recommends the
// best that met the limits and whose measured memory fits the budget. It is
// the benchmark's yardstick, not a tuner: it knows nothing and tries all.
type Grid struct {
	opt   GridOptions
	cands []Candidate
	next  int
	best  Recommendation
	notes []string
}

var _ Strategy = (*Grid)(nil)

// NewGrid returns the grid strategy.
func NewGrid(opt GridOptions) (*Grid, error) {
	if err := opt.Options.defaults(); err != nil {
		return nil, err
	}
	if opt.PMs == nil {
		opt.PMs = []string{"static", "dynamic", "ondemand"}
	}
	if opt.Children == nil {
		opt.Children = DefaultGridChildren
	}
	if opt.ValidateTimestamps == nil {
		opt.ValidateTimestamps = []string{"on", "off"}
	}
	g := &Grid{opt: opt}
	g.best = Recommendation{Config: opt.Start.Clone(), Conns: opt.Conns}
	id := 0
	for _, pm := range opt.PMs {
		for _, n := range opt.Children {
			for _, vt := range opt.ValidateTimestamps {
				base := FitConnections(opt.Start, opt.Conns)
				base["opcache.validate_timestamps"] = vt
				cfg, err := Pool(base, pm, n)
				if err != nil {
					g.notes = append(g.notes, fmt.Sprintf("pm=%s children=%d skipped: %v", pm, n, err))
					continue
				}
				id++
				g.cands = append(g.cands, Candidate{ID: id, Phase: PhaseGrid, Label: fmt.Sprintf("pm=%s children=%d vt=%s", pm, n, vt), Config: cfg, Conns: opt.Conns})
			}
		}
	}
	return g, nil
}

// Size is the number of trials the grid takes.
func (g *Grid) Size() int { return len(g.cands) }

// Ask implements Strategy: one candidate at a time.
func (g *Grid) Ask() []Candidate {
	if g.next >= len(g.cands) {
		return nil
	}
	c := g.cands[g.next]
	g.next++
	c.Config = c.Config.Clone()
	return []Candidate{c}
}

// Tell implements Strategy.
func (g *Grid) Tell(c Candidate, o Outcome) {
	if o.Bench == nil || Violation(g.opt.Limits, o.Bench) != "" {
		return
	}
	s := score(g.opt.Objective, o.Bench)
	var m Memory
	m.Observe(c.Config, o.Bench)
	if b := g.opt.Limits.MemoryBudgetB; b > 0 && m.Known() && m.Predict(c.Config) > b {
		return
	}
	if s > g.best.Score {
		g.best.Config, g.best.Score, g.best.ThroughputRPS = c.Config.Clone(), s, o.Bench.ThroughputRPS
		g.best.PredictedMemB = m.Predict(c.Config)
	}
}

// Recommend implements Strategy.
func (g *Grid) Recommend() Recommendation {
	r := g.best
	r.Config = r.Config.Clone()
	r.Trials = g.next
	r.Notes = append([]string(nil), g.notes...)
	return r
}

// Close implements Strategy.
func (g *Grid) Close() {}
