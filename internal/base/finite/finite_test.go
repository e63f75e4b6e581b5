package finite

import (
	"encoding/json"
	"math"
	"reflect"
	"testing"
)

type inner struct {
	R  float64
	Ps []float64
}

type doc struct {
	A   float64
	B   *inner
	M   map[string]float64
	S   []inner
	V   map[string]inner
	Any map[string]any
	ok  float64 // unexported: left alone
}

func TestClean(t *testing.T) {
	d := &doc{
		A:   math.Inf(1),
		B:   &inner{R: math.NaN(), Ps: []float64{1, math.Inf(-1)}},
		M:   map[string]float64{"x": math.Inf(1), "y": 2},
		S:   []inner{{R: 3}, {R: math.Inf(1)}},
		V:   map[string]inner{"k": {R: math.NaN()}},
		Any: map[string]any{"f": math.Inf(1), "s": "t"},
		ok:  math.Inf(1),
	}
	got := Clean(d)
	want := []string{"A", "Any[f]", "B.Ps[1]", "B.R", "M[x]", "S[1].R", "V[k].R"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Clean = %q, want %q", got, want)
	}
	d.ok = 0
	if _, err := json.Marshal(d); err != nil {
		t.Errorf("still not JSON: %v", err)
	}
	if d.M["y"] != 2 || d.S[0].R != 3 || d.Any["s"] != "t" {
		t.Errorf("finite values changed: %+v", d)
	}
	if Clean(&doc{A: 1}) != nil {
		t.Error("a clean document reported changes")
	}
}
