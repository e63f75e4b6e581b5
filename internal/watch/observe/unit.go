package observe

import (
	"fmt"

	"github.com/phptune/phptune/internal/model/results"
	"github.com/phptune/phptune/internal/servers/unit"
)

// unitSample is the lab application's part of Unit's /status.
func unitSample(s *unit.Status, maxProcs int64) *results.UnitStatus {
	a := s.Applications[unit.AppName]
	return &results.UnitStatus{
		ConnectionsActive: s.Connections.Active, ConnectionsIdle: s.Connections.Idle, RequestsTotal: s.Requests.Total,
		ProcessesRunning: a.Processes.Running, ProcessesStarting: a.Processes.Starting, ProcessesIdle: a.Processes.Idle,
		MaxProcesses: maxProcs, RequestsActive: a.Requests.Active,
	}
}

// unitWarnings says when Unit's application ran out of processes: no idle
// one, every process up to unit.processes running, and more requests
// active than processes — the rest wait in Unit's router, which accepts
// every connection, so the kernel's accept queue stays empty and only
// Unit's own figures show the queue (one busy process, the others idle).
func unitWarnings(in []results.Sample) []string {
	var full, seen int
	var running, waiting int64
	for _, s := range in {
		u := s.Unit
		if u == nil {
			continue
		}
		seen++
		if u.ProcessesIdle == 0 && u.RequestsActive > u.ProcessesRunning && (u.MaxProcesses == 0 || u.ProcessesRunning >= u.MaxProcesses) {
			full++
			running = max(running, u.ProcessesRunning)
			waiting = max(waiting, u.RequestsActive-u.ProcessesRunning)
		}
	}
	if seen == 0 || full == 0 {
		return nil
	}
	return []string{fmt.Sprintf("Unit ran with every application process busy (%d) in %d samples and up to %d requests waited in Unit's router for one: the pool is at unit.processes", running, full, waiting)}
}
