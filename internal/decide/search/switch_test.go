package search

import (
	"testing"

	"github.com/phptune/phptune/internal/model/knob"
)

// TestServerChallengeSwitchesThePool: a challenge of another server is a
// configuration of that server with the incumbent's PHP concurrency, not
// the incumbent's pool knobs of its own server (which made tune --site of
// a mod_php site skip server=apache-event-fpm as invalid: its
// apache.prefork.* belong to prefork).
func TestServerChallengeSwitchesThePool(t *testing.T) {
	tests := []struct {
		server string // the incumbent's
		n      int    // its static pool
		to     string
		want   map[string]string
	}{
		{knob.ApachePreforkModPHP, 2, knob.ApacheEventFPM, map[string]string{
			"pm": "static", "pm.max_children": "2", "apache.max_request_workers": "150",
			"apache.prefork.start_servers": "5", "apache.prefork.min_spare_servers": "5", "apache.prefork.max_spare_servers": "10"}},
		{knob.ApachePreforkModPHP, 300, knob.NginxFPM, map[string]string{
			"pm.max_children": "300", "apache.max_request_workers": "150", "apache.prefork.server_limit": "256"}},
		{knob.ApacheEventFPM, 4, knob.ApachePreforkModPHP, map[string]string{
			"apache.max_request_workers": "4", "apache.prefork.start_servers": "4", "apache.prefork.max_spare_servers": "5", "pm.max_children": "5"}},
		{knob.ApacheEventFPM, 6, knob.NginxFPM, map[string]string{"pm": "static", "pm.max_children": "6"}},
		{knob.NginxFPM, 3, knob.UnitPHP, map[string]string{"unit.processes": "3", "unit.pm": "static", "pm.max_children": "5"}},
	}
	for _, tt := range tests {
		base := knob.Defaults()
		base[knob.ServerKnob] = tt.server
		inc, err := Pool(base, "static", tt.n)
		if err != nil {
			t.Fatalf("%s pool of %d: %v", tt.server, tt.n, err)
		}
		ch := Challenge{Name: "server=" + tt.to, Group: "server", Set: []string{"server=" + tt.to}}
		cfg, err := challenged(inc, ch)
		if err != nil {
			t.Errorf("%s (%d workers) + %s: %v", tt.server, tt.n, ch.Name, err)
			continue
		}
		if cfg.Server() != tt.to || cfg.PHPWorkers() != int64(tt.n) {
			t.Errorf("%s + %s: server %s with %d PHP workers, want %s with the incumbent's %d", tt.server, ch.Name, cfg.Server(), cfg.PHPWorkers(), tt.to, tt.n)
		}
		for k, v := range tt.want {
			if cfg[k] != v {
				t.Errorf("%s + %s: %s=%s, want %s", tt.server, ch.Name, k, cfg[k], v)
			}
		}
	}
	// A challenge that names the new server's workers keeps its own.
	base := knob.Defaults()
	base[knob.ServerKnob] = knob.ApachePreforkModPHP
	inc, err := Pool(base, "static", 2)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := challenged(inc, Challenge{Name: "event with 9", Set: []string{"server=" + knob.ApacheEventFPM, "pm=static", "pm.max_children=9"}})
	if err != nil || cfg["pm.max_children"] != "9" {
		t.Errorf("server=apache-event-fpm;pm.max_children=9 over prefork: pm.max_children=%s (%v), want the challenge's 9", cfg["pm.max_children"], err)
	}
}
