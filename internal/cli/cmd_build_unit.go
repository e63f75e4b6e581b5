package cli

import (
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/phptune/phptune/internal/build/phpbuild"
	"github.com/phptune/phptune/internal/servers/unit"
)

func newBuildUnitCmd(env *Env) *cobra.Command {
	var (
		o       phpbuild.UnitOptions
		jsonOut bool
	)
	cmd := &cobra.Command{
		Use:   "unit --source unit-X.Y.Z.tar.gz",
		Short: "Build NGINX Unit and its PHP module (against Debian's libphp embed SAPI) into the build cache",
		Long: `build unit compiles NGINX Unit's unitd and its PHP module (php.unit.so)
from the source tarball you give, against the installed PHP's embed SAPI
(Debian's libphpX.Y-embed and phpX.Y-dev, installed when run as root), and
keeps them in the build cache (` + unit.BuildsDir(phpbuild.Dir()) + `).
Debian does not package Unit and phptune downloads nothing: take the source
release from NGINX (a unitd on PATH, from NGINX's own packages, is used
instead when there is one).

A lab runs Unit with --set server=unit (lab up --server unit); the newest
build is used. The steps run as the unprivileged build account at the
lowest priority, like phptune build; the same tarball and embed SAPI again
return the existing build at once (--rebuild makes it again).`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if o.Source == "" {
				return usageErr("Try: phptune build unit --source unit-1.35.0.tar.gz", "--source is required: Debian does not package NGINX Unit and phptune downloads nothing")
			}
			o.Progress = env.Stderr
			res, err := phpbuild.BuildUnit(env.Ctx, o)
			if err != nil {
				return buildErr(err, "Try: phptune build unit --help")
			}
			r := res.Record
			if jsonOut {
				return printJSON(env, r)
			}
			fmt.Fprintf(env.Stdout, "Unit build %s\n  Unit %s from %s (sha256 %s)\n  PHP module against %s\n", r.ID, r.Version, r.Source, r.SourceSHA256[:16], r.PHP)
			if len(r.Steps) > 0 {
				fmt.Fprintf(env.Stdout, "  steps %s\n", stepsText(len(r.Steps), func(i int) (string, float64) { return r.Steps[i].Name, r.Steps[i].Seconds }))
			}
			fmt.Fprintf(env.Stdout, "  unitd and modules: %s\n  run it: phptune lab up --server unit\n", filepath.Join(unit.BuildsDir(phpbuild.Dir()), r.ID))
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Source, "source", "", "Unit's source tarball, unit-X.Y.Z.tar.gz (required)")
	f.IntVar(&o.Jobs, "jobs", 2, "make -j")
	f.BoolVar(&o.Rebuild, "rebuild", false, "build again even when the same build exists")
	f.BoolVar(&o.NoInstall, "no-install", false, "print the apt-get line for missing build dependencies instead of installing them")
	f.BoolVar(&jsonOut, "json", false, "print the build's record as JSON")
	return cmd
}
