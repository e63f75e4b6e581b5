package servercompare

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/phptune/phptune/internal/model/knob"
)

func TestBudget(t *testing.T) {
	base := Budget{Total: 60 * time.Minute, Servers: 4, Configs: 8, Rounds: 4, Duration: 10 * time.Second, Warmup: 3 * time.Second,
		TrialDuration: 10 * time.Second, TrialWarmup: 3 * time.Second}
	cases := []struct {
		name    string
		edit    func(*Budget)
		want    time.Duration // per tune; 0: refused
		wantErr string
	}{
		// 60 min − 15 s − 4×8×15 s = 3105 s, over 4 servers.
		{"issue's default", func(*Budget) {}, 3105 * time.Second / 4, ""},
		{"one server", func(b *Budget) { b.Servers, b.Configs = 1, 2 }, 3600*time.Second - 15*time.Second - 8*15*time.Second, ""},
		// 2 servers, 2 rounds of 4 configurations of 3.5 s: 28 s; tunes
		// need 35 s each; set-up 15 s: 113 s, suggested as 2 min.
		{"test's tiny budget", func(b *Budget) {
			*b = Budget{Total: 120 * time.Second, Servers: 2, Configs: 4, Rounds: 2, Duration: time.Second, Warmup: 500 * time.Millisecond,
				TrialDuration: time.Second, TrialWarmup: 500 * time.Millisecond}
		}, (120*time.Second - 15*time.Second - 28*time.Second) / 2, ""},
		{"too short", func(b *Budget) { b.Total = 15 * time.Minute }, 0, "give --time-budget 18m30s or more"},
		{"comparison alone too long", func(b *Budget) { b.Total = 5 * time.Minute }, 0, "too short for 4 servers"},
		{"no server", func(b *Budget) { b.Servers = 0 }, 0, "at least one server"},
		{"no round", func(b *Budget) { b.Rounds = 0 }, 0, "at least one server, round"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := base
			c.edit(&b)
			got, err := b.PerTune()
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("PerTune = %v, %v; want an error with %q", got, err, c.wantErr)
				}
				var be *BudgetError
				if errors.As(err, &be) && (be.Need != b.Need() || be.Suggest() < be.Need || be.Suggest()%(30*time.Second) != 0) {
					t.Errorf("need %s, suggest %s; Need() = %s", be.Need, be.Suggest(), b.Need())
				}
				return
			}
			if err != nil || got != c.want {
				t.Fatalf("PerTune = %v, %v; want %v", got, err, c.want)
			}
			if got < b.MinTune() {
				t.Errorf("share %s below the minimum %s", got, b.MinTune())
			}
			if total := SetupTime + b.CompareTime() + time.Duration(b.Servers)*got; total > b.Total {
				t.Errorf("the split spends %s of %s", total, b.Total)
			}
		})
	}
}

func TestParseServers(t *testing.T) {
	cases := []struct {
		in      string
		want    []string
		wantErr string
	}{
		{"nginx-fpm", []string{"nginx-fpm"}, ""},
		{" nginx-fpm , apache-prefork-modphp ,", []string{"nginx-fpm", "apache-prefork-modphp"}, ""},
		{strings.Join(knob.Servers, ","), knob.Servers, ""},
		{"nginx-fpm,lighttpd-php", nil, `unknown server "lighttpd-php": choose from ` + strings.Join(knob.Servers, ", ")},
		{"nginx", nil, "unknown server"},
		{"nginx-fpm,nginx-fpm", nil, "named twice"},
		{"", nil, "no server named"},
		{" , ", nil, "no server named"},
	}
	for _, c := range cases {
		got, err := ParseServers(c.in)
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("ParseServers(%q) = %v, %v; want error with %q", c.in, got, err, c.wantErr)
			}
			continue
		}
		if err != nil || strings.Join(got, ",") != strings.Join(c.want, ",") {
			t.Errorf("ParseServers(%q) = %v, %v; want %v", c.in, got, err, c.want)
		}
	}
	if _, err := ParseServers("caddy"); !errors.Is(err, ErrUnknownServer) {
		t.Errorf("an unknown server is not ErrUnknownServer: %v", err)
	}
}

func TestChangesAndDefault(t *testing.T) {
	for _, s := range knob.Servers {
		d := DefaultConfig(s)
		if d.Server() != s {
			t.Errorf("DefaultConfig(%s) runs %s", s, d.Server())
		}
		if err := d.Validate(); err != nil {
			t.Errorf("DefaultConfig(%s): %v", s, err)
		}
		if ch := Changes(d); len(ch) != 0 {
			t.Errorf("Changes(default %s) = %v", s, ch)
		}
	}
	rec := DefaultConfig(knob.NginxFPM)
	rec["pm"], rec["pm.max_children"] = "static", "3"
	// The spares stay at their defaults: they do not matter to a static
	// pool, and a knob of another server is never a change.
	if got := strings.Join(Changes(rec), " "); got != "pm=static pm.max_children=3" {
		t.Errorf("Changes = %q", got)
	}
}
