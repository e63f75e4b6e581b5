package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/phptune/phptune/internal/build/setup"
	"github.com/phptune/phptune/internal/stack/lab"
	"github.com/phptune/phptune/internal/traffic/locust"
)

func init() { register(newSetupCmd) }

func newSetupCmd(env *Env) *cobra.Command {
	var testTools, withAnsible, withLocust, withCaches bool
	cmd := &cobra.Command{
		Use:   "setup",
		Short: "Install the Debian packages the lab needs (as root), or print the apt-get line",
		Long: `setup installs what is missing of: nginx, php-fpm, php-cli, php-cgi, php-mysql,
mariadb-server, wordpress and its default theme, apache2-bin and libapache2-mod-php,
lighttpd, caddy and h2o (their services neither started nor enabled: labs run the
binaries with their own configuration), linux-perf, libc6-dbg and php-excimer
(phptune profile; installed with service starts denied), mmdebstrap (phptune
php add); with --with-test-tools:
wrk, ab and chromium, used by the tests and benchmarks, what building NGINX
Unit needs, the caches, and Debian's apache2 package (the real-server tier's
production Apache reads its /etc/apache2; its service neither started nor
enabled); with --with-caches: redis-server and memcached (their
services neither started nor enabled), which a site lab runs privately inside its
seal for a site that names Redis or Memcached; with --with-ansible: Debian's ansible-core, which runs the role
phptune export ansible writes; with --with-locust: Locust (pinned, with its
pinned dependencies) in a virtual environment of its own under phptune's
state directory, made with Debian's python3-venv, owned by root and run as
the lab's account (bench --engine locust). Run as root it calls apt-get;
otherwise it prints the command to run. It reports Locust's version when it
is installed.`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			var extra [][]string
			if testTools {
				extra = append(extra, setup.TestTools, setup.RealServer)
			}
			if testTools || withCaches {
				extra = append(extra, setup.Caches)
			}
			if withAnsible {
				extra = append(extra, setup.Ansible)
			}
			if withLocust {
				extra = append(extra, locust.Packages)
			}
			if err := setup.Install(env.Ctx, extra, env.Stderr); err != nil {
				return err
			}
			if withLocust {
				home, err := lab.EnsureHome()
				if err != nil {
					return err
				}
				_, err = locust.Install(env.Ctx, home, env.Stderr)
				return err
			}
			if v, err := locust.Version(env.Ctx, lab.Home()); err == nil {
				fmt.Fprintf(env.Stderr, "setup: Locust %s is installed in %s\n", v, locust.VenvDir(lab.Home()))
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&testTools, "with-test-tools", false, "also install wrk, ab, chromium, Unit's build tools, the caches and Debian's apache2 package (its service neither started nor enabled)")
	cmd.Flags().BoolVar(&withCaches, "with-caches", false, "also install redis-server and memcached (a site lab's own cache, for a site that names one)")
	cmd.Flags().BoolVar(&withAnsible, "with-ansible", false, "also install ansible-core (for phptune export ansible's role)")
	cmd.Flags().BoolVar(&withLocust, "with-locust", false, "also install Locust "+locust.PinnedVersion()+" into phptune's own virtual environment (bench --engine locust)")
	return cmd
}
