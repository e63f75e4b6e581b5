package cli

import (
	"github.com/spf13/cobra"

	"github.com/phptune/phptune/internal/setup"
)

func init() { register(newSetupCmd) }

func newSetupCmd(env *Env) *cobra.Command {
	var testTools, withAnsible bool
	cmd := &cobra.Command{
		Use:   "setup",
		Short: "Install the Debian packages the lab needs (as root), or print the apt-get line",
		Long: `setup installs what is missing of: nginx, php-fpm, php-cli, php-cgi, php-mysql,
mariadb-server, wordpress and its default theme, apache2-bin and libapache2-mod-php,
lighttpd, caddy and h2o (their services neither started nor enabled: labs run the
binaries with their own configuration), linux-perf, libc6-dbg and php-excimer
(phptune profile; installed with service starts denied); with --with-test-tools:
wrk, ab and chromium, used by the tests and benchmarks, and what building NGINX
Unit needs; with --with-ansible: Debian's ansible-core, which runs the role
phptune export ansible writes. Run as root it calls apt-get; otherwise it
prints the command to run.`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			var extra [][]string
			if testTools {
				extra = append(extra, setup.TestTools)
			}
			if withAnsible {
				extra = append(extra, setup.Ansible)
			}
			return setup.Install(env.Ctx, extra, env.Stderr)
		},
	}
	cmd.Flags().BoolVar(&testTools, "with-test-tools", false, "also install wrk, ab, chromium and Unit's build tools")
	cmd.Flags().BoolVar(&withAnsible, "with-ansible", false, "also install ansible-core (for phptune export ansible's role)")
	return cmd
}
