package search

import (
	"strings"
	"testing"

	"github.com/phptune/phptune/internal/model/knob"
)

func TestTopologyChallenges(t *testing.T) {
	defer func(f func() int) { knob.CPUs = f }(knob.CPUs)
	knob.CPUs = func() int { return 2 }
	byName := map[string]Challenge{}
	for _, c := range KnownChallenges() {
		byName[c.Name] = c
	}
	for _, c := range ChallengesFor(knob.NginxFPM, true) {
		if c.Group == "pools" || c.Group == "fastcgi_keepalive" {
			t.Errorf("%s is a default challenge; topology is decided only when named", c.Name)
		}
	}
	tests := []struct {
		pool      []string
		challenge string
		want      string // the knob's value, or part of the refusal
	}{
		{[]string{"pm=static", "pm.max_children=8"}, KeepaliveMost, "3"},  // 3 x 2 workers < 8
		{[]string{"pm=static", "pm.max_children=20"}, KeepaliveMost, "9"}, // 9 x 2 < 20
		{[]string{"pm=static", "pm.max_children=2"}, KeepaliveMost, "not fewer than pm.max_children = 2"},
		{[]string{"pm=static", "pm.max_children=8", "fpm.pools=2"}, KeepaliveMost, "1"},
		{[]string{"pm=static", "pm.max_children=8"}, "fpm.pools=4", "4"},
		{[]string{"pm=static", "pm.max_children=3"}, "fpm.pools=4", "fpm.pools=4 is greater than pm.max_children=3"},
	}
	for _, tt := range tests {
		inc, err := knob.Defaults().Apply(tt.pool)
		if err != nil {
			t.Fatal(err)
		}
		ch, ok := byName[tt.challenge]
		if !ok {
			t.Fatalf("%s is not a known challenge", tt.challenge)
		}
		cfg, err := challenged(inc, ch)
		name := ch.Set[0][:strings.IndexByte(ch.Set[0], '=')]
		switch {
		case err != nil && !strings.Contains(err.Error(), tt.want):
			t.Errorf("%v + %s: %v, want %q", tt.pool, tt.challenge, err, tt.want)
		case err == nil && cfg[name] != tt.want:
			t.Errorf("%v + %s: %s=%s, want %s", tt.pool, tt.challenge, name, cfg[name], tt.want)
		}
	}
}
