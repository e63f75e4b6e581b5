package cli

import (
	"context"
	"io"
	"path/filepath"
	"testing"

	"github.com/spf13/pflag"
)

// TestDemoIsTuneWithOtherDefaults: demo has every flag tune has, each
// with tune's default except demoDefaults, and its defaults pass tune's
// whole planning (the check that runs before anything starts). Before,
// demo built its own tuneFlags and left --engine empty: "phptune demo"
// exited 2 at once.
func TestDemoIsTuneWithOtherDefaults(t *testing.T) {
	t.Setenv("PHPTUNE_HOME", t.TempDir())
	env := &Env{Ctx: context.Background(), Stdout: io.Discard, Stderr: io.Discard}
	tuneCmd := newTuneCmd(env)
	demo, f := demoCmd(env)
	if err := demo.ParseFlags(nil); err != nil {
		t.Fatal(err)
	}
	tuneCmd.Flags().VisitAll(func(tf *pflag.Flag) {
		df := demo.Flags().Lookup(tf.Name)
		if df == nil {
			t.Errorf("tune has --%s, demo does not", tf.Name)
			return
		}
		want, ok := demoDefaults[tf.Name]
		if !ok {
			want = tf.DefValue
		}
		if tf.Name == flagApp {
			want = "wordpress"
		}
		if df.DefValue != want && !(ok && df.Value.String() == df.DefValue) {
			t.Errorf("demo --%s defaults to %q, want %q", tf.Name, df.DefValue, want)
		}
	})
	if f.conns != 20 || f.stack.app != "wordpress" || f.eng.name != "phptune" {
		t.Errorf("demo's defaults: -c %d, --app %q, --engine %q; want 20, wordpress, phptune", f.conns, f.stack.app, f.eng.name)
	}
	f.outDir = filepath.Join(t.TempDir(), "out")
	if _, err := planTune(context.Background(), f, "demo"); err != nil {
		t.Fatalf("demo's defaults are refused by tune's planning: %v", err)
	}
}
