package stacksession

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
)

// TestCheckWorkload: what can be checked before a lab exists is refused
// with a fix; the rest passes.
func TestCheckWorkload(t *testing.T) {
	// Relative names: a spec starting with / is a path of the site.
	t.Chdir(t.TempDir())
	good, bad := "good.scenario", "bad.scenario"
	if err := os.WriteFile(good, []byte("1 GET /index.php\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, []byte("lots of GETs\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		spec, app, want string
	}{
		{"", "hello", ""},
		{"front", "hello", ""},
		{"/shop/", "hello", ""},
		{"comment", "wordpress", ""},
		{"comment", "hello", "needs the wordpress app"},
		{good, "hello", ""},
		{bad, "hello", "--workload " + bad},
		{"missing.scenario", "hello", "is not front, comment"},
	} {
		err := CheckWorkload(c.spec, c.app)
		if c.want == "" {
			if err != nil {
				t.Errorf("%q on %s: %v", c.spec, c.app, err)
			}
			continue
		}
		var ce *CheckError
		if !errors.As(err, &ce) || ce.Fix == "" || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q on %s: %v, want a refusal with a fix saying %q", c.spec, c.app, err, c.want)
		}
	}
}

// TestCheckStackRefusesAMissingLab: --lab names a lab that does not exist.
func TestCheckStackRefusesAMissingLab(t *testing.T) {
	t.Setenv("PHPTUNE_HOME", t.TempDir())
	_, _, err := CheckStack(context.Background(), "nosuchlab", "", "", "front")
	var ce *CheckError
	if !errors.As(err, &ce) || !strings.Contains(ce.Fix, "phptune lab status") {
		t.Fatalf("%v, want a refusal pointing at phptune lab status", err)
	}
}
