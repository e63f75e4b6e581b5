// Package site finds a site on a live host, reading only: the nginx
// server block or Apache virtual host that serves a name or a directory,
// its document root, the php-fpm pool it passes PHP to (account, pm
// settings, php_admin/php values) or the mod_php that runs it, the php.ini
// and conf.d PHP loads, and the database and caches the application's own
// configuration names, with the running MariaDB server that database
// reaches. It is what a lab of the site copies; nothing here starts a
// server, connects to one or writes.
package site

// Site is a site as the live host serves it.
type Site struct {
	// Query is the NAME or DIR asked for; Root the host's root ("/").
	Query string `json:"query"`
	Root  string `json:"root"`
	// Vhost is the server block chosen; Also the others of the same site
	// (the port-80 twin of a TLS server, say).
	Vhost Vhost   `json:"vhost"`
	Also  []Vhost `json:"also,omitempty"`
	// Host is the Host header its requests carry (the first plain
	// server name; "" when it has none); HTTPS and Port are what PHP
	// sees (HTTPS=on, SERVER_PORT).
	Host  string `json:"host"`
	HTTPS bool   `json:"https"`
	Port  int    `json:"port"`
	// DocRoot is its document root on disk.
	DocRoot DocRoot `json:"docroot"`
	// Pool is the php-fpm pool it passes PHP to; nil with PoolError
	// saying why when none was found.
	Pool      *Pool  `json:"pool,omitempty"`
	PoolError string `json:"pool_error,omitempty"`
	// PHP is the php.ini and conf.d its pool's master loads, and the
	// settings of interest in effect.
	PHP *PHPConfig `json:"php,omitempty"`
	// App is what the application's configuration names; nil with
	// AppError saying why (no known application, unreadable file).
	App      *App   `json:"app,omitempty"`
	AppError string `json:"app_error,omitempty"`
	// DB is where the application's database connection goes and which
	// running server answers there.
	DB *DBTarget `json:"db,omitempty"`
	// Caches are every cache server the site names: its application's
	// (App.Caches), WordPress's object-cache drop-in's default and PHP's
	// session handler's (collectCaches).
	Caches []Cache `json:"caches,omitempty"`
	// Remote are the hosts of other machines the database and caches
	// name, resolved on this host (findRemote).
	Remote []RemoteHost `json:"remote,omitempty"`
	// Notes are what discovery could not read or wants said.
	Notes []string `json:"notes,omitempty"`
	// dropIn is the cache WordPress's object-cache drop-in talks to
	// (dropInCache), for collectCaches.
	dropIn string
}

// DocRoot is a document root on disk.
type DocRoot struct {
	Path string `json:"path"`
	// Real is Path with its links resolved (a deployment's "current"
	// link), when it differs.
	Real  string `json:"real,omitempty"`
	Owner string `json:"owner"`
	UID   int    `json:"uid"`
	Files int64  `json:"files"`
	Bytes int64  `json:"bytes"`
	// Partial says the count stopped at maxWalk entries.
	Partial bool   `json:"partial,omitempty"`
	Error   string `json:"error,omitempty"`
}

// Pool is the php-fpm pool that serves a site.
type Pool struct {
	MasterPID  int    `json:"master_pid"`
	MasterConf string `json:"master_conf"`
	Name       string `json:"name"`
	File       string `json:"file"`
	Listen     string `json:"listen"`
	// Verified says how the pool was tied to the address: the kernel
	// shows its master holds the listening socket, or only the
	// configuration says so.
	Verified string `json:"verified"`
	User     string `json:"user"`
	Group    string `json:"group"`
	// PM holds pm and every pm.* setting as written.
	PM map[string]string `json:"pm"`
	// Overrides holds php_value, php_flag, php_admin_value and
	// php_admin_flag settings by their full key.
	Overrides map[string]string `json:"overrides,omitempty"`
	// Env names the env[...] variables it sets (their values can be
	// secrets and are not kept).
	Env []string `json:"env,omitempty"`
	// Settings holds the other pool settings that shape how it serves
	// (listen.backlog, request_terminate_timeout, ...; see poolSettings),
	// as written.
	Settings map[string]string `json:"settings,omitempty"`
}

// PHPConfig is what a php-fpm master loads.
type PHPConfig struct {
	Binary  string `json:"binary"`
	Version string `json:"version"`
	Ini     string `json:"ini"`
	// ScanDirs are its conf.d directories, IniFiles the files read from
	// them, in PHP's order.
	ScanDirs []string `json:"scan_dirs"`
	IniFiles []string `json:"ini_files"`
	// Settings are the settings of interest in effect (opcache.*, the
	// MySQL drivers' default sockets, memory_limit, ...) with where each
	// was set; PHP's defaults for the others.
	Settings map[string]Setting `json:"settings"`
	// Shadowed are the php.ini values a pool override replaced in
	// Settings: a setting PHP reads only when the master starts (the
	// opcache's shared memory) keeps its php.ini value in the workers.
	Shadowed map[string]Setting `json:"shadowed,omitempty"`
	Errors   []string           `json:"errors,omitempty"`
}

// Setting is one PHP setting and where its value was set.
type Setting struct {
	Value string `json:"value"`
	From  string `json:"from"` // "file:line" or "pool NAME"
}

// DBTarget is where an application's database connection goes.
type DBTarget struct {
	Endpoint Endpoint `json:"endpoint"`
	// ServerPID, Socket and DataDir name the running MariaDB server that
	// answers there (0 when none does that phptune trusts).
	ServerPID int    `json:"server_pid,omitempty"`
	Socket    string `json:"socket,omitempty"`
	DataDir   string `json:"datadir,omitempty"`
	// IP is the address the host resolved to on this machine, when the
	// configuration names a host that is not a loopback IP literal
	// (another machine, or a name); Name is that host when it is a name.
	IP   string `json:"ip,omitempty"`
	Name string `json:"name,omitempty"`
	// How says how the server was found (the kernel's listening table,
	// or its configured socket).
	How string `json:"how,omitempty"`
	// SizeBytes and Tables are the database's files in the server's
	// data directory (file-per-table InnoDB, Aria, MyISAM), read from the
	// directory (no query, no temporary table); SizeNote says when they
	// could not be read.
	SizeBytes int64  `json:"size_bytes,omitempty"`
	Tables    int    `json:"tables,omitempty"`
	SizeNote  string `json:"size_note,omitempty"`
	Error     string `json:"error,omitempty"`
}
