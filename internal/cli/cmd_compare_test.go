package cli

import (
	"encoding/json"
	"os"
	"os/user"
	"path/filepath"
	"strings"
	"testing"

	"github.com/phptune/phptune/internal/model/knob"
	"github.com/phptune/phptune/internal/model/results"
	"github.com/phptune/phptune/internal/stack/lab"
	"github.com/phptune/phptune/internal/stack/lab/labtest"
)

// TestCompareFlagsCheckedFirst: --docroot, --lab and --user are checked
// before any lab exists.
func TestCompareFlagsCheckedFirst(t *testing.T) {
	home := t.TempDir()
	t.Setenv("PHPTUNE_HOME", home)
	dir := t.TempDir()
	t.Chdir(dir)
	if err := os.Mkdir(filepath.Join(dir, "app"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFiles(t, filepath.Join(dir, "app"), map[string]string{"index.php": "<?php echo 1;"})
	app := filepath.Join(dir, "app")
	checkUsageErrors(t, []usageCase{
		{[]string{"compare", "--app", "io", "--docroot", app, "default"}, "give exactly one of --lab, --app, --docroot and --site", "Try:"},
		{[]string{"compare", "--docroot", app, "--lab", "x", "default"}, "give exactly one of", "Try:"},
		{[]string{"compare", "--lab", "x", "--user", "www-data", "default"}, "--user: only for a lab of its own", "phptune lab up --user"},
		{[]string{"compare", "--user", "root", "default"}, "--user root", "Try: --user www-data"},
		{[]string{"compare", "--lab", "nosuch", "default"}, "--lab nosuch", "phptune lab status"},
		{[]string{"compare", "--docroot", filepath.Join(dir, "nosuch"), "default"}, "--docroot", "Try: --docroot DIR"},
		{[]string{"compare", "--docroot", app, "--workload", "comment", "default"}, "--workload comment", "--app wordpress"},
	})
	checkNothingCreated(t, home, dir, "app")
}

// TestCompareDocRoot compares two pools on a user's app served from its
// own directory, its php-fpm running as the app's account when there is
// one: a real lab, two short rounds.
func TestCompareDocRoot(t *testing.T) {
	home := labtest.Home(t)
	app := filepath.Join(home, "app")
	if err := os.Mkdir(app, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(app, "index.php"), []byte("<?php echo '<title>App</title>uid ', posix_geteuid();\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	knobs := filepath.Join(home, "static3.knobs")
	if err := os.WriteFile(knobs, []byte("pm=static\npm.max_children=3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"compare", "--docroot", app, "-c", "4", "-d", "1s", "--warmup", "200ms", "--rounds", "2", "--json"}
	if _, err := user.Lookup("www-data"); err == nil && os.Geteuid() == 0 {
		args = append(args, "--user", "www-data")
	}
	out, errs, code := runCLI(t, append(args, "default", "s3="+knobs)...)
	if code != 0 {
		t.Fatalf("compare --docroot: exit %d\n%s", code, errs)
	}
	var res results.Compare
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("compare --json: %v\n%s", err, out)
	}
	if res.App != "docroot" || len(res.Summary) != 2 || res.Summary[1].MedianRPS <= 0 || len(res.Configs[0].RPS) != 2 {
		t.Errorf("compare --docroot: %+v", res)
	}
	if !strings.Contains(errs, "round 2/2 s3") {
		t.Errorf("progress: %s", errs)
	}
	if hs, _ := lab.List(); len(hs) != 0 {
		t.Errorf("compare left labs running: %+v", hs)
	}
}

// TestCompareConfigsLive: "live" is the site's live configuration when
// there is one, and a usage error naming --site when there is none.
func TestCompareConfigsLive(t *testing.T) {
	live := knob.Defaults()
	live["pm"], live["pm.max_children"] = "static", "7"
	cfgs, err := compareConfigs([]string{"live", "before=default", "prod=live"}, live)
	if err != nil {
		t.Fatal(err)
	}
	if len(cfgs) != 3 || cfgs[0].Label != "live" || cfgs[0].Config["pm.max_children"] != "7" || cfgs[2].Label != "prod" || cfgs[2].Config["pm"] != "static" || cfgs[1].Config["pm"] == "static" {
		t.Errorf("configs %+v", cfgs)
	}
	if _, err := compareConfigs([]string{"live"}, nil); err == nil || !strings.Contains(err.Error(), "--site") {
		t.Errorf("live without a site: %v, want a usage error naming --site", err)
	}
}

// TestCompareConfigsInline: LABEL=KNOB=VALUE[;KNOB=VALUE] is a
// configuration of its own when no file has that name; a bad knob in it
// is a usage error naming the label.
func TestCompareConfigsInline(t *testing.T) {
	cfgs, err := compareConfigs([]string{"default", "jit=opcache.jit=tracing;opcache.jit_buffer_size=64M", "st=pm=static"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(cfgs) != 3 || cfgs[1].Label != "jit" || cfgs[1].Config["opcache.jit"] != "tracing" || cfgs[1].Config["opcache.jit_buffer_size"] != "64M" || cfgs[2].Config["pm"] != "static" {
		t.Errorf("configs %+v", cfgs)
	}
	if _, err := compareConfigs([]string{"bad=pm=fast"}, nil); err == nil || !strings.Contains(err.Error(), "configuration bad") {
		t.Errorf("bad inline knob: %v", err)
	}
}
