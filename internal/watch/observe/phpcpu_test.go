package observe

import "testing"

func TestPHPCPUPerRequest(t *testing.T) {
	for _, tc := range []struct {
		name string
		cpu  map[string]float64
		want float64
	}{
		{"nothing observed", nil, 0},
		{"php-fpm workers and master", map[string]float64{GroupFPMWorkers: 0.002, GroupFPMMaster: 0.0005, "nginx workers": 0.001, GroupMariaDB: 0.003, "stack": 0.0065}, 0.0025},
		{"two pools", map[string]float64{GroupFPMWorkers + " www": 0.001, GroupFPMWorkers + " shop": 0.002}, 0.003},
		{"mod_php", map[string]float64{GroupApacheModPHPWorkers: 0.004, GroupGenerator: 0.001}, 0.004},
		{"unit", map[string]float64{GroupUnitWorkers: 0.002, GroupOther: 0.5}, 0.002},
	} {
		if got := PHPCPUPerRequest(tc.cpu); got < tc.want-1e-12 || got > tc.want+1e-12 {
			t.Errorf("%s: %g, want %g", tc.name, got, tc.want)
		}
	}
}
