package observe

import "strings"

// IsPHP reports whether a group is part of PHP's cost: the worker pools
// (IsPHPWorkers) and php-fpm's master, which forks, reaps and respawns
// the workers the load asks for.
func IsPHP(name string) bool {
	return IsPHPWorkers(name) || strings.HasPrefix(name, GroupFPMMaster)
}

// PHPCPUPerRequest is phptune's one definition of "PHP CPU per request":
// the CPU seconds per request of every group IsPHP names, the workers and
// php-fpm's master, from an observation's cpu_s_per_request. The master
// counts because it is what a pool costs: a setting that makes it respawn
// workers (pm = ondemand, pm.max_requests) spends CPU there. 0 unknown.
func PHPCPUPerRequest(cpuPerRequest map[string]float64) float64 {
	cpu := 0.0
	for g, v := range cpuPerRequest {
		if IsPHP(g) {
			cpu += v
		}
	}
	return cpu
}
