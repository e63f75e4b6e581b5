package tune

import (
	"slices"
	"strings"
	"testing"

	"github.com/phptune/phptune/internal/model/knob"
)

func TestSplitChallengeFlag(t *testing.T) {
	for _, tc := range []struct {
		value   string
		want    []string
		wantErr string
	}{
		{"pm=ondemand", []string{"pm=ondemand"}, ""},
		{"jit=tracing,64M", []string{"jit=tracing,64M"}, ""},
		{"pm=dynamic,listen=tcp", []string{"pm=dynamic", "listen=tcp"}, ""},
		// The default list as --help prints it, a name with a comma inside.
		{"pm=dynamic,pm=ondemand,listen=tcp,opcache.validate_timestamps=off,jit=tracing,64M,pm.max_requests=1000",
			[]string{"pm=dynamic", "pm=ondemand", "listen=tcp", "opcache.validate_timestamps=off", "jit=tracing,64M", "pm.max_requests=1000"}, ""},
		{"jit=tracing,64M,pm=static", nil, `a value with commas lists known challenge names`},
		{" pm=dynamic , pm.max_requests=1000 ", []string{"pm=dynamic", "pm.max_requests=1000"}, ""},
		{"grid", []string{"pm=dynamic", "pm=ondemand", "opcache.validate_timestamps=off"}, ""},
		{"opcache.jit=tracing;opcache.jit_buffer_size=64M", []string{"opcache.jit=tracing;opcache.jit_buffer_size=64M"}, ""},
		{"pm=static", []string{"pm=static"}, ""},
		{"nope", nil, `unknown challenge "nope"`},
		{"pm=dynamic,nope", nil, `a value with commas lists known challenge names`},
		{"pm=fast", nil, `challenge "pm=fast": "pm=fast"`},
		{"opcache.jit=tracing;opcache.jit_buffer_size=lots", nil, `"opcache.jit_buffer_size=lots"`},
		{"opcache.jit=tracing;nosuch.knob=1", nil, `"nosuch.knob=1"`},
		{"pm=static;;", []string{"pm=static;;"}, ""},
		{"pm=static;junk", nil, `"junk" is not KNOB=VALUE`},
		{"pm=static;pm=dynamic", nil, "pm is set twice"},
		{"=1", nil, `"=1" is not KNOB=VALUE`},
	} {
		got, err := SplitChallengeFlag(tc.value)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%q: err %v, want %q", tc.value, err, tc.wantErr)
			}
			continue
		}
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("%q = %q, %v; want %q", tc.value, got, err, tc.want)
		}
	}
}

func TestChallengesGroups(t *testing.T) {
	for _, tc := range []struct {
		name   string
		specs  []string
		groups []string
		sets   [][]string
	}{
		{"known keep theirs", []string{"pm=dynamic", "listen=tcp"}, []string{"pm", "listen"}, [][]string{{"pm=dynamic"}, {"listen=tcp"}}},
		{"free-form beside a known one on the same knob", []string{"pm=ondemand", "pm=static"}, []string{"pm", "pm"}, nil},
		{"free-form on their own", []string{"pm.max_requests=500", "opcache.memory_consumption=256"},
			[]string{"pm.max_requests", "opcache.memory_consumption"}, [][]string{{"pm.max_requests=500"}, {"opcache.memory_consumption=256"}}},
		{"overlap through a shared knob", []string{"opcache.jit=tracing;opcache.jit_buffer_size=64M", "opcache.jit=function", "jit=tracing,64M"},
			[]string{"jit", "jit", "jit"}, nil},
		{"two free-form sharing one knob of two", []string{"opcache.jit=tracing;opcache.jit_buffer_size=64M", "opcache.jit_buffer_size=128M"},
			[]string{"opcache.jit+opcache.jit_buffer_size", "opcache.jit+opcache.jit_buffer_size"}, [][]string{{"opcache.jit=tracing", "opcache.jit_buffer_size=64M"}, {"opcache.jit_buffer_size=128M"}}},
		{"duplicates once", []string{"pm=dynamic", "pm=dynamic"}, []string{"pm"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cs, err := Challenges(tc.specs)
			if err != nil {
				t.Fatal(err)
			}
			var groups []string
			for _, c := range cs {
				groups = append(groups, c.Group)
			}
			if !slices.Equal(groups, tc.groups) {
				t.Errorf("groups %q, want %q", groups, tc.groups)
			}
			for i, want := range tc.sets {
				if !slices.Equal(cs[i].Set, want) {
					t.Errorf("%s: set %q, want %q", cs[i].Name, cs[i].Set, want)
				}
			}
		})
	}
}

// TestFreeFormJIT: the JIT challenge the old syntax could not write sets
// both knobs.
func TestFreeFormJIT(t *testing.T) {
	cs, err := Challenges([]string{"opcache.jit=tracing;opcache.jit_buffer_size=64M"})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := knob.Defaults().Apply(cs[0].Set)
	if err != nil || cfg["opcache.jit"] != "tracing" || cfg.Bytes("opcache.jit_buffer_size") != 64<<20 {
		t.Fatalf("applied: %v %v", cfg, err)
	}
}

// FuzzParseChallenge: any text is either refused with an error or gives a
// challenge whose assignments each pass the knob model, set at most once.
func FuzzParseChallenge(f *testing.F) {
	for _, s := range []string{"pm=ondemand", "opcache.jit=tracing;opcache.jit_buffer_size=64M", "jit=tracing,64M", ";", "=", "pm=", "a=b=c", "pm.max_children=99999999999999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := ParseChallenge(s)
		if err != nil {
			return
		}
		if c.Name == "" || c.Group == "" || len(c.Set) == 0 {
			t.Fatalf("%q: incomplete challenge %+v", s, c)
		}
		seen := map[string]bool{}
		for _, a := range c.Set {
			k, v, ok := strings.Cut(a, "=")
			if !ok || seen[k] {
				t.Fatalf("%q: assignment %q", s, a)
			}
			seen[k] = true
			if err := (knob.Config{}).Set(k, v); err != nil {
				t.Fatalf("%q: %q does not pass the knob model: %v", s, a, err)
			}
		}
		if _, err := SplitChallengeFlag(s); err != nil && !strings.Contains(s, ",") {
			t.Fatalf("%q parses but the flag refuses it: %v", s, err)
		}
	})
}
