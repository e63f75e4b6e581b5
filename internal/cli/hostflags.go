package cli

import (
	"context"
	"errors"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/phptune/phptune/internal/live/livehost"
	"github.com/phptune/phptune/internal/servers/phpfpm"
	"github.com/phptune/phptune/internal/stack/lab"
)

// hostFlags say which live host, and which of its php-fpm masters, advise,
// apply and rollback work on: the same flags, with the same meaning, on
// the three commands.
type hostFlags struct {
	root, fpmConfig, fpmPrefix, iniDir, pool, home string
}

// add registers the host flags and apply's and rollback's --apply-home.
func (f *hostFlags) add(cmd *cobra.Command) {
	f.addHost(cmd, "default ROOT/etc/php/VERSION/fpm/php-fpm.conf", "the pool to change (default: the configuration's only pool, or www)")
	cmd.Flags().StringVar(&f.home, "apply-home", "", "where transactions and the files they replaced are kept (default PHPTUNE_HOME/apply)")
}

// addHost registers the flags naming the host, its master and pool;
// fpmDefault and poolHelp say what the command does without them.
func (f *hostFlags) addHost(cmd *cobra.Command, fpmDefault, poolHelp string) {
	fl := cmd.Flags()
	fl.StringVar(&f.root, "root", "/", "the host's root: / on the host itself, or a directory holding a copy (its etc/php/VERSION/fpm, etc/nginx, etc/apache2, etc/mysql)")
	fl.StringVar(&f.fpmConfig, "fpm-config", "", "php-fpm.conf of the master ("+fpmDefault+")")
	fl.StringVar(&f.fpmPrefix, "fpm-prefix", "", "the master's -p prefix, when it runs with one (relative paths in its configuration are resolved against it)")
	fl.StringVar(&f.iniDir, "ini-dir", "", "the conf.d php-fpm's PHP reads (default ROOT/etc/php/VERSION/fpm/conf.d)")
	fl.StringVar(&f.pool, "pool", "", poolHelp)
}

// spec is the host the flags name.
func (f *hostFlags) spec() livehost.HostSpec {
	return livehost.HostSpec{Root: f.root, FPMConfig: f.fpmConfig, FPMPrefix: f.fpmPrefix, IniDir: f.iniDir, Pool: f.pool}
}

// resolve reads the host's php-fpm configuration and finds its master.
func (f *hostFlags) resolve(ctx context.Context) (*livehost.LiveFPM, error) {
	bin, err := phpfpm.Find()
	if err != nil {
		return nil, err
	}
	live, err := livehost.OpenFPM(ctx, f.spec(), bin)
	return live, hostErr(err)
}

func (f *hostFlags) applyHome() string {
	if f.home != "" {
		return f.home
	}
	return filepath.Join(lab.Home(), "apply")
}

// hostErr is err with livehost's *InputError (a mistake in what the flags
// named) made a usage error, its fix the hint.
func hostErr(err error) error {
	var ie *livehost.InputError
	if errors.As(err, &ie) {
		return &UsageError{Msg: ie.Msg, Hint: ie.Fix}
	}
	return err
}
