package knob

import (
	"strings"
	"testing"
)

func TestKnobAvailable(t *testing.T) {
	jit, _ := Lookup("opcache.jit_buffer_size")
	bounded := Knob{Name: "x", MinPHP: "7.4", MaxPHP: "8.1"}
	for _, c := range []struct {
		k       Knob
		version string
		want    bool
	}{
		{jit, "8.2", true},
		{jit, "8.0", true},
		{jit, "8.0.30", true},
		{jit, "7.4", false},
		{jit, "7.4.33", false},
		{jit, "7", false},
		{jit, "8", true},
		{jit, "8.2.36-1+deb12u1", true},
		{jit, "", true},       // unreadable: nothing to refuse on
		{jit, "banana", true}, // unreadable
		{jit, "10.0", true},   // newer major
		{bounded, "7.3", false},
		{bounded, "7.4", true},
		{bounded, "8.1.2", true},
		{bounded, "8.2", false},
		{Knob{Name: "y"}, "5.6", true},
	} {
		if got := c.k.Available(c.version); got != c.want {
			t.Errorf("%s (min %q max %q) on PHP %q: available %v, want %v", c.k.Name, c.k.MinPHP, c.k.MaxPHP, c.version, got, c.want)
		}
	}
}

func TestConfigUnavailable(t *testing.T) {
	cfg := Defaults()
	if errs := cfg.Unavailable("7.4"); len(errs) != 0 {
		t.Errorf("the defaults set nothing, so nothing is refused: %v", errs)
	}
	cfg, err := cfg.Apply([]string{"opcache.jit_buffer_size=64M", "opcache.jit=function", "pm.max_children=9"})
	if err != nil {
		t.Fatal(err)
	}
	if errs := cfg.Unavailable("8.2"); len(errs) != 0 {
		t.Errorf("PHP 8.2 has the JIT: %v", errs)
	}
	errs := cfg.Unavailable("7.4.33")
	if len(errs) != 2 || errs[0].Knob != "opcache.jit" || errs[1].Knob != "opcache.jit_buffer_size" {
		t.Fatalf("want opcache.jit and opcache.jit_buffer_size refused on 7.4, got %v", errs)
	}
	msg := errs[1].Error()
	for _, want := range []string{"opcache.jit_buffer_size=64M", "needs PHP 8.0 or newer", "this host runs PHP 7.4.33"} {
		if !strings.Contains(msg, want) {
			t.Errorf("%q lacks %q", msg, want)
		}
	}
	for _, c := range []struct {
		e    VersionError
		want string
	}{
		{VersionError{Knob: "k", Value: "1", Version: "8.3", MaxPHP: "8.2"}, "k=1: k was removed after PHP 8.2; this host runs PHP 8.3"},
		{VersionError{Knob: "k", Value: "1", Version: "7.0", MinPHP: "7.4", MaxPHP: "8.2"}, "k=1: k exists in PHP 7.4 to 8.2; this host runs PHP 7.0"},
	} {
		if got := c.e.Error(); got != c.want {
			t.Errorf("got %q, want %q", got, c.want)
		}
	}
}

func TestKnobVersions(t *testing.T) {
	jit, _ := Lookup("opcache.jit")
	for _, c := range []struct {
		k    Knob
		want string
	}{{jit, " (PHP 8.0 and later)"}, {Knob{MaxPHP: "7.4"}, " (PHP up to 7.4)"}, {Knob{MinPHP: "7.0", MaxPHP: "7.4"}, " (PHP 7.0 to 7.4)"}, {Knob{}, ""}} {
		if got := c.k.Versions(); got != c.want {
			t.Errorf("%+v: %q, want %q", c.k, got, c.want)
		}
	}
}

func TestSameBranch(t *testing.T) {
	for _, c := range []struct {
		a, b string
		same bool
	}{{"8.2.36", "8.2", true}, {"8.2.36", "8.3.1", false}, {"8.2", "8.2.0-1+deb12", true}, {" 8.2 ", "8.2.1", true}, {"", "", false},
		{"8", "8", false}, {"8", "8.0", false}, {"x.y", "x.y", false}, {"8.", "8.", false}, {"8.2x", "8.2", true}, {"7.4.33", "8.4.1", false}} {
		if SameBranch(c.a, c.b) != c.same {
			t.Errorf("SameBranch(%q, %q) != %v", c.a, c.b, c.same)
		}
	}
}

// FuzzSameBranch: the relation is symmetric, and a version is of its own
// branch exactly when it names a major and a minor.
func FuzzSameBranch(f *testing.F) {
	for _, s := range []string{"8.2.36", "8.2", "8", "8.2.0-1+deb12", "x.y", "", " 8.3 ", "-1.2", "8.-2"} {
		f.Add(s, "8.2")
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		if SameBranch(a, b) != SameBranch(b, a) {
			t.Fatalf("SameBranch(%q, %q) is not symmetric", a, b)
		}
		br, ok := branch(a)
		if SameBranch(a, a) != (ok && br.hasMinor) {
			t.Fatalf("SameBranch(%q, itself) = %v, branch %+v %v", a, SameBranch(a, a), br, ok)
		}
	})
}

func TestBranch(t *testing.T) {
	for _, c := range []struct{ v, want string }{
		{"8.2.36", "8.2"}, {"8.2.36-1+deb12", "8.2"}, {"8.4", "8.4"}, {" 8.3.1 ", "8.3"},
		{"8", ""}, {"", ""}, {"x.y", ""}, {"8.", ""}, {"8.2x", "8.2"}, {"-1.2", ""},
	} {
		if got := Branch(c.v); got != c.want {
			t.Errorf("Branch(%q) = %q, want %q", c.v, got, c.want)
		}
	}
}
