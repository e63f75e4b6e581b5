package site

import (
	"fmt"
	"strings"
)

// Engine is the database server a driver setting names, in one word:
// "mysql" (MySQL and MariaDB, whatever the PHP extension: mysqli,
// pdo_mysql, Joomla's pdomysql, phpBB's phpbb\db\driver\mysqli,
// Moodle's mariadb), "postgresql", "sqlite", "sqlsrv", "oracle", or the
// driver as written for one not known. No driver is MySQL: every
// application here defaults to it.
func (d Database) Engine() string {
	drv := strings.ToLower(strings.TrimSpace(d.Driver))
	if i := strings.LastIndexAny(drv, `\/`); i >= 0 {
		drv = drv[i+1:] // phpBB's class, Craft's and Symfony's namespaces
	}
	drv = strings.TrimPrefix(strings.TrimPrefix(drv, "pdo_"), "pdo")
	switch drv {
	case "", "mysql", "mysqli", "mariadb", "auroramysql":
		return "mysql"
	case "pgsql", "postgres", "postgresql", "pg":
		return "postgresql"
	case "sqlite", "sqlite3":
		return "sqlite"
	case "sqlsrv", "mssql", "mssqlnative":
		return "sqlsrv"
	case "oci", "oci8", "oracle":
		return "oracle"
	}
	return drv
}

// otherEngine says why a lab does not copy a's database: it is not on
// MariaDB/MySQL.
func otherEngine(a *App) string {
	where := a.Source()
	what := a.DB.Name
	if what == "" {
		what = "(unnamed)"
	}
	return fmt.Sprintf("the site's database %s is on %s (driver %q, %s): a lab copies only MariaDB/MySQL databases", what, engineName(a.DB.Engine()), a.DB.Driver, where)
}

func engineName(e string) string {
	switch e {
	case "postgresql":
		return "PostgreSQL"
	case "sqlite":
		return "SQLite"
	case "sqlsrv":
		return "SQL Server"
	case "oracle":
		return "Oracle"
	}
	return e
}

// Name is the application as people name it.
func (a *App) Name() string { return appName(a.Kind) }

// Source is where its database settings came from: FILE:LINE, or the
// file alone when the line is not known.
func (a *App) Source() string {
	if a.Line > 0 {
		return fmt.Sprintf("%s:%d", a.File, a.Line)
	}
	return a.File
}

// appName is an App.Kind as people write it.
func appName(kind string) string {
	switch kind {
	case "wordpress":
		return "WordPress"
	case "laravel":
		return "Laravel"
	case "drupal":
		return "Drupal"
	case "mediawiki":
		return "MediaWiki"
	case "joomla":
		return "Joomla"
	case "nextcloud":
		return "Nextcloud/ownCloud"
	case "magento":
		return "Magento 2"
	case "symfony":
		return "Symfony (Doctrine)"
	case "craft":
		return "Craft CMS"
	case "typo3":
		return "TYPO3"
	case "moodle":
		return "Moodle"
	case "prestashop":
		return "PrestaShop"
	case "phpbb":
		return "phpBB"
	case "given":
		return "an application whose configuration phptune does not read"
	}
	return kind
}
