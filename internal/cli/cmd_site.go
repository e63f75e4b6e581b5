package cli

import (
	"encoding/json"
	"errors"
	"io"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/phptune/phptune/internal/base/termsafe"
	"github.com/phptune/phptune/internal/sitecopy/site"
)

func init() { register(newSiteCmd) }

func newSiteCmd(env *Env) *cobra.Command {
	var h site.Host
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "site NAME|DIR",
		Short: "Show how the live host serves a site: its vhost, pool, php.ini, database (read-only)",
		Long: `phptune site finds a site on this host, reading only, and shows what a lab of
it would copy: the nginx server block that serves NAME (server_name, with
nginx's own choice among exact names, wildcards and regular expressions) or
whose root is DIR, its names (the first is the Host a lab's requests carry),
listens and whether it serves TLS (PHP then sees HTTPS=on), its document root
(files, size, owner), the php-fpm pool its fastcgi_pass reaches (the master
holding that socket, by the kernel's socket table: the pool's account, pm
settings, php_value/php_admin_value overrides), the php.ini and conf.d that
master loads with the opcache and MySQL-socket settings in effect, and the
application's database and caches as its own configuration names them
(WordPress wp-config.php, Laravel .env, Drupal sites/default/settings.php,
MediaWiki LocalSettings.php, Joomla configuration.php, Nextcloud/ownCloud
config/config.php, Magento 2 app/etc/env.php, Symfony and Craft .env, TYPO3
settings.php or LocalConfiguration.php, Moodle and phpBB config.php,
PrestaShop app/config/parameters.php), with the file:line it came from:
name, user, host, which running MariaDB server answers there and the
database's size on disk. Its password is never printed (<redacted>). A
database on PostgreSQL, SQLite or another engine is named as such: a lab
copies only MariaDB/MySQL.

Apache's vhosts are read beside nginx's (Debian's /etc/apache2, as data:
apache2 is never run): ServerName and ServerAlias matched as Apache matches
them, DocumentRoot, SSLEngine, and PHP through proxy_fcgi to a php-fpm pool
or through mod_php with Apache's php.ini. When both servers serve NAME it
says which answers on which port.

It runs nginx -T (which only reads and tests the configuration, as advise
does) and otherwise reads files and /proc: it starts no server, connects to
no database and writes nothing. Application files are read without following
a link, at most 1 MiB each. A NAME or DIR that matches no vhost, or several
different sites, is refused with the candidates named.

lab up --site NAME|DIR runs this site in a sealed lab (its own network and
mount namespaces, its own MariaDB, the docroot as an overlay): this command
shows what it finds. An Apache-served site gets Apache in its lab, with
its vhost's rewrite rules and .htaccess settings.`,
		Example: `  phptune site site.test
  phptune site /var/www/site --json`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageErr("Try: phptune site site.test, or phptune site /var/www/site", "phptune site takes one NAME (a server name) or DIR (a document root), not %d arguments", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if !filepath.IsAbs(h.Root) {
				return usageErr("Try: --root / (this host) or --root /srv/host-copy", "--root %q: give an absolute directory", h.Root)
			}
			query := args[0]
			if strings.HasPrefix(query, ".") && strings.Contains(query, "/") {
				if abs, err := filepath.Abs(query); err == nil {
					query = abs
				}
			}
			s, err := site.Discover(env.Ctx, h, query)
			var nm *site.NoMatchError
			var am *site.AmbiguousError
			if errors.As(err, &nm) || errors.As(err, &am) {
				return usageErr("", "%s", termsafe.Text(err.Error()))
			}
			if err != nil {
				return err
			}
			if asJSON {
				enc := json.NewEncoder(env.Stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(s)
			}
			var b strings.Builder
			site.WriteText(&b, s)
			_, err = io.WriteString(env.Stdout, termsafe.Text(b.String()))
			return err
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&h.Root, "root", "/", "the host's root: / on the host itself, or a directory holding a copy (its etc/nginx, etc/apache2)")
	fl.StringVar(&h.NginxConfig, "nginx-config", "", "nginx.conf of the running nginx master (default: ROOT/etc/nginx/nginx.conf)")
	fl.StringVar(&h.NginxPrefix, "nginx-prefix", "", "nginx's -p prefix, when it runs with one (default: the master's)")
	fl.StringVar(&h.FPMPrefix, "fpm-prefix", "", "the php-fpm masters' -p prefix, when they run with one")
	fl.StringVar(&h.ScanDir, "ini-dir", "", "the conf.d the php-fpm master reads, when it runs with PHP_INI_SCAN_DIR (default ROOT/etc/php/VERSION/fpm/conf.d, else Debian's)")
	fl.BoolVar(&asJSON, "json", false, "print it as JSON")
	return cmd
}
