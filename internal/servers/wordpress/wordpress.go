// Package wordpress prepares a private WordPress from the distro's package:
// it copies /usr/share/wordpress into the lab (Debian's own wp-config.php
// reads /etc/wordpress, which the lab must not touch), writes the lab's
// wp-config.php, and carries the PHP script that installs and seeds it.
package wordpress

import (
	_ "embed"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/phptune/phptune/internal/servers/mariadb"
)

// Source is where Debian's wordpress package installs WordPress.
const Source = "/usr/share/wordpress"

//go:embed install.php
var installScript []byte

//go:embed mu-plugin.php
var muPlugin []byte

// InstallScript is the PHP script that installs and seeds WordPress.
func InstallScript() []byte { return installScript }

// Check says whether the distro's WordPress and its default theme are there.
func Check() error {
	if _, err := os.Stat(filepath.Join(Source, "wp-settings.php")); err != nil {
		return fmt.Errorf("WordPress is not installed at %s; run: phptune setup (or apt-get install wordpress wordpress-theme-twentytwentythree)", Source)
	}
	if _, err := os.Stat(filepath.Join(Source, "wp-content/themes/twentytwentythree")); err != nil {
		return fmt.Errorf("WordPress's default theme is missing; run: apt-get install wordpress-theme-twentytwentythree")
	}
	return nil
}

// Prepare copies WordPress and the lab's must-use plugin into docroot; the
// caller writes wp-config.php (see Config), which holds the database
// password and so gets its own owner and mode.
func Prepare(docroot string) error {
	if err := copyTree(Source, docroot); err != nil {
		return fmt.Errorf("copying WordPress: %w", err)
	}
	if err := os.MkdirAll(filepath.Join(docroot, "wp-content/uploads"), 0o755); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(docroot, "wp-content/mu-plugins"), 0o755); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(docroot, "wp-content/mu-plugins/phptune-lab.php"), muPlugin, 0o644)
}

// Config renders wp-config.php. WP_HTTP_BLOCK_EXTERNAL keeps WordPress from
// calling home (update checks would wait on a network that is not there and
// distort timings); DISABLE_WP_CRON keeps cron's loopback requests out of the
// measurements.
func Config(siteURL, dbSocket string, acct mariadb.Account) string {
	q := func(s string) string {
		return "'" + strings.ReplaceAll(strings.ReplaceAll(s, `\`, `\\`), "'", `\'`) + "'"
	}
	var b strings.Builder
	b.WriteString("<?php\n// Rendered by phptune for a lab. Secrets here are random per lab.\n")
	fmt.Fprintf(&b, "define('DB_NAME', %s);\n", q(acct.DB))
	fmt.Fprintf(&b, "define('DB_USER', %s);\n", q(acct.User))
	fmt.Fprintf(&b, "define('DB_PASSWORD', %s);\n", q(acct.Password))
	fmt.Fprintf(&b, "define('DB_HOST', %s);\n", q("localhost:"+dbSocket))
	b.WriteString("define('DB_CHARSET', 'utf8mb4');\ndefine('DB_COLLATE', '');\n")
	for _, k := range []string{"AUTH_KEY", "SECURE_AUTH_KEY", "LOGGED_IN_KEY", "NONCE_KEY", "AUTH_SALT", "SECURE_AUTH_SALT", "LOGGED_IN_SALT", "NONCE_SALT"} {
		fmt.Fprintf(&b, "define('%s', %s);\n", k, q(mariadb.Password()))
	}
	fmt.Fprintf(&b, "define('WP_HOME', %s);\ndefine('WP_SITEURL', %s);\n", q(siteURL), q(siteURL))
	b.WriteString("define('WP_CONTENT_DIR', __DIR__ . '/wp-content');\n")
	b.WriteString("define('WP_HTTP_BLOCK_EXTERNAL', true);\ndefine('DISABLE_WP_CRON', true);\n")
	b.WriteString("define('AUTOMATIC_UPDATER_DISABLED', true);\ndefine('WP_AUTO_UPDATE_CORE', false);\n")
	b.WriteString("define('WP_DEBUG', false);\n$table_prefix = 'wp_';\n")
	b.WriteString("if (!defined('ABSPATH')) { define('ABSPATH', __DIR__ . '/'); }\nrequire_once ABSPATH . 'wp-settings.php';\n")
	return b.String()
}

// copyTree copies src into dst, following symlinks that point into the
// distro's tree (Debian links some files to /etc/wordpress, which are
// skipped: the lab has its own configuration).
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if d.Type()&fs.ModeSymlink != 0 {
			real, err := filepath.EvalSymlinks(p)
			if err != nil || strings.HasPrefix(real, "/etc/") {
				return nil
			}
			st, err := os.Stat(real)
			if err != nil || st.IsDir() {
				return nil
			}
			return copyFile(real, target, 0o644)
		}
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		if rel == "wp-config.php" {
			return nil
		}
		return copyFile(p, target, 0o644)
	})
}

func copyFile(src, dst string, mode os.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, mode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
