package site

import (
	"net/url"
	"strings"
)

// The readers of the other applications people run. Each reads the
// application's own configuration file as data (phpData for PHP, readEnv
// for a .env), never running it: a computed value is named in
// NotLiteral, never guessed.

// splitHost fills db's Port and Socket from a host written as
// "host:port", "host:/socket" or "/socket" (MediaWiki, Joomla,
// Nextcloud, Magento, PrestaShop and phpBB all accept these), when no
// setting of their own named them.
func splitHost(db *Database) {
	if db.Port != 0 || db.Socket != "" {
		return
	}
	if strings.HasPrefix(db.Host, "/") {
		db.Socket = db.Host
		return
	}
	_, db.Port, db.Socket = SplitWPHost(db.Host)
}

// present is the first of names s holds, "" for none.
func present(s *settings, names ...string) string {
	for _, n := range names {
		if _, ok := s.vals[n]; ok {
			return n
		}
	}
	return ""
}

// addCache adds the cache server addr (as the clients write it) names,
// when it is one.
func (a *App) addCache(kind, addr string, defPort int, setting string) {
	if c, ok := CacheAddr(addr, defPort); ok {
		a.Caches = append(a.Caches, Cache{Kind: kind, Addr: c, Setting: setting})
	}
}

// redisPassword gives the Redis servers added since caches[from] the
// password setting pwName holds (a site lab's own Redis asks for it), or
// the one their address carried as a URL (redis://user:PASS@host).
func (a *App) redisPassword(s *settings, from int, pwName string, urls ...string) {
	pw, _ := s.get(pwName, &a.NotLiteral)
	for _, u := range urls {
		if pw == "" {
			pw = urlPassword(u)
		}
	}
	if pw == "" {
		return
	}
	for i := from; i < len(a.Caches); i++ {
		if a.Caches[i].Kind == "redis" {
			a.Caches[i].Password = NewSecret(pw)
		}
	}
}

// urlPassword is the password of a URL's user:password@, "" for none.
func urlPassword(v string) string {
	if !strings.Contains(v, "@") {
		return ""
	}
	u, err := url.Parse(v)
	if err != nil || u.User == nil {
		return ""
	}
	p, _ := u.User.Password()
	return p
}

// hostPortCache adds the cache server of a host setting and a port
// setting (a host that is a path is a socket).
func (a *App) hostPortCache(s *settings, kind, hostName, portName string, defHost string, defPort int) {
	nl := &a.NotLiteral
	h, ok := s.get(hostName, nl)
	if !ok || h == "" {
		if defHost == "" {
			return
		}
		h = defHost
	}
	if strings.Contains(h, "://") || strings.Contains(h, "@") {
		// A URL (tls://host, redis://user:pass@host): as the clients
		// read it, its credentials dropped.
		a.addCache(kind, h, defPortOf(kind, defPort), hostName)
		return
	}
	if strings.ContainsAny(h, " \t\x00\n,;") {
		return
	}
	port, _ := s.get(portName, nl)
	if port == "0" {
		port = ""
	}
	a.Caches = append(a.Caches, Cache{Kind: kind, Addr: tcpAddr(h, port, defPortOf(kind, defPort)), Setting: hostName})
}

func defPortOf(kind string, p int) int {
	if p != 0 {
		return p
	}
	if kind == "redis" {
		return 6379
	}
	return 11211
}

// listed adds a cache server for each literal string element name.0,
// name.1, ... of s (an array of addresses), defaults when there is none.
func (a *App) listed(s *settings, kind, name string, defaults ...string) {
	n := 0
	for _, k := range s.order {
		rest, ok := strings.CutPrefix(k, name+".")
		if !ok || strings.Contains(rest, ".") || n == maxCacheAddrs {
			continue
		}
		if v, ok := s.get(k, &a.NotLiteral); ok {
			n++
			a.addCache(kind, v, defPortOf(kind, 0), name)
		}
	}
	if n == 0 {
		for _, d := range defaults {
			a.addCache(kind, d, defPortOf(kind, 0), name+" (unset: the default)")
		}
	}
}

// ParseMediaWiki reads MediaWiki's LocalSettings.php: $wgDBtype,
// $wgDBserver ("host", "host:port"), $wgDBport, $wgDBname, $wgDBuser,
// $wgDBpassword, $wgDBprefix; its caches: $wgMainCacheType (and the
// session, parser and message caches) set to CACHE_MEMCACHED or a
// memcached-* type reach $wgMemCachedServers (MediaWiki's default
// 127.0.0.1:11211), set to "redis" (or an $wgObjectCaches entry of
// class RedisBagOStuff) reach that entry's servers.
func ParseMediaWiki(file string, src []byte) (*App, error) {
	s := phpData(lexPHP(string(src)))
	if present(s, "$wgDBname") == "" {
		return nil, errNoApp("MediaWiki ($wgDBname)", file)
	}
	a := &App{Kind: "mediawiki", File: file, Line: s.line("$wgDBname")}
	a.DB.Host = "localhost"
	s.readDB(&a.DB, dbSettings{Driver: "$wgDBtype", Name: "$wgDBname", User: "$wgDBuser", Password: "$wgDBpassword",
		Host: "$wgDBserver", Port: "$wgDBport"}, &a.NotLiteral)
	splitHost(&a.DB)
	a.TablePrefix, _ = s.get("$wgDBprefix", &a.NotLiteral)
	mem, redis := false, map[string]bool{}
	for _, n := range []string{"$wgMainCacheType", "$wgSessionCacheType", "$wgParserCacheType", "$wgMessageCacheType"} {
		v := s.vals[n]
		switch {
		case v.word == "CACHE_MEMCACHED" || v.literal && strings.HasPrefix(v.text, "memcached"):
			mem = true
		case v.literal && v.text != "" && (v.text == "redis" || s.vals["$wgObjectCaches."+v.text+".class"].text == "RedisBagOStuff"):
			redis[v.text] = true
		}
	}
	if mem {
		a.listed(s, "memcached", "$wgMemCachedServers", "127.0.0.1:11211")
	}
	for _, k := range s.order {
		if len(a.Caches) >= maxCacheAddrs {
			break
		}
		if name, ok := strings.CutPrefix(k, "$wgObjectCaches."); ok && strings.HasSuffix(name, ".class") && redis[strings.TrimSuffix(name, ".class")] {
			n := len(a.Caches)
			a.listed(s, "redis", "$wgObjectCaches."+strings.TrimSuffix(name, ".class")+".servers")
			a.redisPassword(s, n, "$wgObjectCaches."+strings.TrimSuffix(name, ".class")+".password")
		}
	}
	return a, nil
}

// ParseJoomla reads Joomla's configuration.php, the class JConfig's
// public $dbtype, $host ("host", "host:port", "host:/socket"), $user,
// $password, $db and $dbprefix; its caches: $cache_handler and
// $session_handler set to redis or memcached reach $redis_server_host
// and _port, $memcached_server_host and _port (the session's own
// $session_redis_server_host, ... when set).
func ParseJoomla(file string, src []byte) (*App, error) {
	s := phpData(lexPHP(string(src)))
	if present(s, "$db") == "" || !strings.Contains(string(src), "JConfig") {
		return nil, errNoApp("Joomla (class JConfig's $db)", file)
	}
	a := &App{Kind: "joomla", File: file, Line: s.line("$db")}
	a.DB.Host = "localhost"
	s.readDB(&a.DB, dbSettings{Driver: "$dbtype", Name: "$db", User: "$user", Password: "$password", Host: "$host"}, &a.NotLiteral)
	splitHost(&a.DB)
	a.TablePrefix, _ = s.get("$dbprefix", &a.NotLiteral)
	for _, h := range []struct{ handler, prefix string }{{"$cache_handler", "$"}, {"$session_handler", "$session_"}} {
		v, _ := s.get(h.handler, &a.NotLiteral)
		switch v {
		case "redis", "memcached":
			host := h.prefix + v + "_server_host"
			if h.prefix != "$" && present(s, host) == "" {
				host = "$" + v + "_server_host" // the cache's server
			}
			n := len(a.Caches)
			a.hostPortCache(s, v, host, strings.TrimSuffix(host, "host")+"port", "localhost", 0)
			a.redisPassword(s, n, strings.TrimSuffix(host, "host")+"auth")
		}
	}
	return a, nil
}

// ParseNextcloud reads Nextcloud's (and ownCloud's) config/config.php,
// its $CONFIG array: dbtype (mysql, pgsql, sqlite3, oci), dbhost
// ("host", "host:port", "host:/socket"), dbport, dbname, dbuser,
// dbpassword, dbtableprefix; its caches: memcache.local,
// memcache.distributed and memcache.locking naming a Redis class reach
// redis (host: a name or a socket; port) or redis.cluster's seeds, a
// Memcached class memcached_servers ([host, port] pairs).
func ParseNextcloud(file string, src []byte) (*App, error) {
	s := phpData(lexPHP(string(src)))
	if present(s, "$CONFIG.dbtype", "$CONFIG.dbname") == "" {
		return nil, errNoApp("Nextcloud ($CONFIG's dbtype, dbname)", file)
	}
	a := &App{Kind: "nextcloud", File: file, Line: s.line(present(s, "$CONFIG.dbname", "$CONFIG.dbtype"))}
	a.DB.Host = "localhost"
	s.readDB(&a.DB, dbSettings{Driver: "$CONFIG.dbtype", Name: "$CONFIG.dbname", User: "$CONFIG.dbuser", Password: "$CONFIG.dbpassword",
		Host: "$CONFIG.dbhost", Port: "$CONFIG.dbport"}, &a.NotLiteral)
	splitHost(&a.DB)
	a.TablePrefix, _ = s.get("$CONFIG.dbtableprefix", &a.NotLiteral)
	redis, mem := false, false
	for _, n := range []string{"$CONFIG.memcache.local", "$CONFIG.memcache.distributed", "$CONFIG.memcache.locking"} {
		v, _ := s.get(n, &a.NotLiteral)
		redis = redis || strings.HasSuffix(v, `\Redis`)
		mem = mem || strings.HasSuffix(v, `\Memcached`)
	}
	if redis {
		n := len(a.Caches)
		if present(s, "$CONFIG.redis.host") != "" {
			a.hostPortCache(s, "redis", "$CONFIG.redis.host", "$CONFIG.redis.port", "", 6379)
			a.redisPassword(s, n, "$CONFIG.redis.password")
		} else {
			a.listed(s, "redis", "$CONFIG.redis.cluster.seeds")
			a.redisPassword(s, n, "$CONFIG.redis.cluster.password")
		}
	}
	if mem {
		n := 0
		for _, k := range s.order {
			rest, ok := strings.CutPrefix(k, "$CONFIG.memcached_servers.")
			idx, ok2 := strings.CutSuffix(rest, ".0")
			if !ok || !ok2 || strings.Contains(idx, ".") || n == maxCacheAddrs {
				continue
			}
			n++
			a.hostPortCache(s, "memcached", k, "$CONFIG.memcached_servers."+idx+".1", "", 11211)
		}
	}
	return a, nil
}

// ParseMagento reads Magento 2's app/etc/env.php, the array it returns:
// db.connection.default's host ("host", "host:port", a socket path),
// dbname, username, password, and db.table_prefix; its caches: each
// cache.frontend entry whose backend is Redis reaches its
// backend_options server and port, and session.save redis reaches
// session.redis host and port (memcache(d) its save_path).
func ParseMagento(file string, src []byte) (*App, error) {
	s := phpData(lexPHP(string(src)))
	const c = "return.db.connection.default."
	if present(s, c+"dbname") == "" {
		return nil, errNoApp("Magento 2 (db.connection.default.dbname)", file)
	}
	a := &App{Kind: "magento", File: file, Line: s.line(c + "dbname"), DB: Database{Driver: "mysql", Host: "localhost"}}
	s.readDB(&a.DB, dbSettings{Name: c + "dbname", User: c + "username", Password: c + "password", Host: c + "host", Port: c + "port"}, &a.NotLiteral)
	if a.DB.Driver == "" {
		a.DB.Driver = "mysql"
	}
	splitHost(&a.DB)
	a.TablePrefix, _ = s.get("return.db.table_prefix", &a.NotLiteral)
	for _, k := range s.order {
		if len(a.Caches) >= maxCacheAddrs {
			break
		}
		if !strings.HasPrefix(k, "return.cache.frontend.") || !strings.HasSuffix(k, ".backend") {
			continue
		}
		if v, _ := s.get(k, &a.NotLiteral); strings.Contains(v, "Redis") {
			n := len(a.Caches)
			a.hostPortCache(s, "redis", k+"_options.server", k+"_options.port", "127.0.0.1", 6379)
			srv, _ := s.get(k+"_options.server", &a.NotLiteral)
			a.redisPassword(s, n, k+"_options.password", srv)
		}
	}
	switch v, _ := s.get("return.session.save", &a.NotLiteral); v {
	case "redis":
		n := len(a.Caches)
		a.hostPortCache(s, "redis", "return.session.redis.host", "return.session.redis.port", "127.0.0.1", 6379)
		a.redisPassword(s, n, "return.session.redis.password")
	case "memcache", "memcached":
		if p, ok := s.get("return.session.save_path", &a.NotLiteral); ok {
			for _, it := range strings.Split(p, ",") {
				a.addCache("memcached", it, 11211, "return.session.save_path")
			}
		}
	}
	return a, nil
}

// ParseTYPO3 reads TYPO3's config/system/settings.php (v12 and later) or
// typo3conf/LocalConfiguration.php (earlier), the array it returns:
// DB.Connections.Default's driver, host, port, unix_socket, dbname,
// user, password; its caches: SYS.caching.cacheConfigurations entries
// whose backend is the RedisBackend reach their options' hostname and
// port, the MemcachedBackend their options' servers.
func ParseTYPO3(file string, src []byte) (*App, error) {
	s := phpData(lexPHP(string(src)))
	const c = "return.DB.Connections.Default."
	if present(s, c+"dbname") == "" {
		return nil, errNoApp("TYPO3 (DB.Connections.Default.dbname)", file)
	}
	a := &App{Kind: "typo3", File: file, Line: s.line(c + "dbname"), DB: Database{Host: "localhost"}}
	s.readDB(&a.DB, dbSettings{Driver: c + "driver", Name: c + "dbname", User: c + "user", Password: c + "password",
		Host: c + "host", Port: c + "port", Socket: c + "unix_socket"}, &a.NotLiteral)
	backends := 0
	for _, k := range s.order {
		if len(a.Caches) >= maxCacheAddrs || backends == maxCacheAddrs {
			break // a hostile file's thousands of entries
		}
		if !strings.HasPrefix(k, "return.SYS.caching.cacheConfigurations.") || !strings.HasSuffix(k, ".backend") {
			continue
		}
		backends++
		opts := strings.TrimSuffix(k, "backend") + "options."
		switch v, _ := s.get(k, &a.NotLiteral); {
		case strings.HasSuffix(v, "RedisBackend"):
			n := len(a.Caches)
			a.hostPortCache(s, "redis", opts+"hostname", opts+"port", "127.0.0.1", 6379)
			a.redisPassword(s, n, opts+"password")
		case strings.HasSuffix(v, "MemcachedBackend"):
			a.listed(s, "memcached", opts+"servers")
		}
	}
	return a, nil
}

// ParseMoodle reads Moodle's config.php: $CFG->dbtype (mysqli, mariadb,
// auroramysql, pgsql, sqlsrv), dbhost, dbname, dbuser, dbpass, prefix,
// and $CFG->dboptions' dbport and dbsocket (a path; true for the
// default); its caches: a Redis session handler reaches
// $CFG->session_redis_host and _port, a Memcached one
// $CFG->session_memcached_save_path. (Moodle's other caches are set in
// its data directory, not read.)
func ParseMoodle(file string, src []byte) (*App, error) {
	s := phpData(lexPHP(string(src)))
	if present(s, "$CFG.dbname") == "" {
		return nil, errNoApp("Moodle ($CFG->dbname)", file)
	}
	a := &App{Kind: "moodle", File: file, Line: s.line("$CFG.dbname"), DB: Database{Host: "localhost"}}
	s.readDB(&a.DB, dbSettings{Driver: "$CFG.dbtype", Name: "$CFG.dbname", User: "$CFG.dbuser", Password: "$CFG.dbpass",
		Host: "$CFG.dbhost", Port: "$CFG.dboptions.dbport", Socket: "$CFG.dboptions.dbsocket"}, &a.NotLiteral)
	if !strings.HasPrefix(a.DB.Socket, "/") {
		a.DB.Socket = "" // true, 1: the driver's default socket
	}
	a.TablePrefix, _ = s.get("$CFG.prefix", &a.NotLiteral)
	h, _ := s.get("$CFG.session_handler_class", &a.NotLiteral)
	switch {
	case strings.HasSuffix(h, `\redis`):
		n := len(a.Caches)
		a.hostPortCache(s, "redis", "$CFG.session_redis_host", "$CFG.session_redis_port", "127.0.0.1", 6379)
		a.redisPassword(s, n, "$CFG.session_redis_auth")
	case strings.HasSuffix(h, `\memcached`):
		if p, ok := s.get("$CFG.session_memcached_save_path", &a.NotLiteral); ok {
			for _, it := range strings.Split(p, ",") {
				a.addCache("memcached", it, 11211, "$CFG->session_memcached_save_path")
			}
		}
	}
	return a, nil
}

// ParsePrestaShop reads PrestaShop's app/config/parameters.php, the
// parameters of the array it returns: database_host ("host",
// "host:port"), database_port, database_name, database_user,
// database_password, database_prefix. (Its cache is set in the
// database, not read.)
func ParsePrestaShop(file string, src []byte) (*App, error) {
	s := phpData(lexPHP(string(src)))
	const c = "return.parameters."
	if present(s, c+"database_name") == "" {
		return nil, errNoApp("PrestaShop (parameters.database_name)", file)
	}
	a := &App{Kind: "prestashop", File: file, Line: s.line(c + "database_name"), DB: Database{Host: "localhost"}}
	s.readDB(&a.DB, dbSettings{Name: c + "database_name", User: c + "database_user", Password: c + "database_password",
		Host: c + "database_host", Port: c + "database_port"}, &a.NotLiteral)
	a.DB.Driver = "mysql"
	splitHost(&a.DB)
	a.TablePrefix, _ = s.get(c+"database_prefix", &a.NotLiteral)
	return a, nil
}

// ParsePhpBB reads phpBB's config.php: $dbms (phpbb\db\driver\mysqli,
// \postgres, \sqlite3, ...), $dbhost, $dbport, $dbname, $dbuser,
// $dbpasswd, $table_prefix; $acm_type naming the Redis or Memcached
// cache driver names that cache, at the address its PHPBB_ACM_REDIS_HOST
// and _PORT (or PHPBB_ACM_MEMCACHED_HOST and _PORT) defines give, else
// the driver's default (localhost).
func ParsePhpBB(file string, src []byte) (*App, error) {
	s := phpData(lexPHP(string(src)))
	if present(s, "$dbms") == "" {
		return nil, errNoApp("phpBB ($dbms)", file)
	}
	a := &App{Kind: "phpbb", File: file, Line: s.line("$dbms"), DB: Database{Host: "localhost"}}
	s.readDB(&a.DB, dbSettings{Driver: "$dbms", Name: "$dbname", User: "$dbuser", Password: "$dbpasswd",
		Host: "$dbhost", Port: "$dbport"}, &a.NotLiteral)
	if a.DB.Host == "" {
		a.DB.Host = "localhost"
	}
	splitHost(&a.DB)
	a.TablePrefix, _ = s.get("$table_prefix", &a.NotLiteral)
	acm, _ := s.get("$acm_type", &a.NotLiteral)
	for _, kind := range []string{"redis", "memcached"} {
		if strings.HasSuffix(acm, `\`+kind) {
			c := "define.PHPBB_ACM_" + strings.ToUpper(kind) + "_"
			n := len(a.Caches)
			a.hostPortCache(s, kind, c+"HOST", c+"PORT", "localhost", 0)
			if len(a.Caches) > n {
				a.Caches[n].Setting = "$acm_type, " + strings.TrimPrefix(c, "define.") + "HOST"
			}
			a.redisPassword(s, n, c+"PASSWORD")
		}
	}
	return a, nil
}

// ParseSymfonyEnv reads a Symfony (Doctrine) .env or .env.local; kind is
// "symfony" or "craft" (Craft CMS reads the same file). The database is
// DATABASE_URL (mysql://USER:PASS@HOST:PORT/NAME?unix_socket=...,
// postgresql://..., sqlite:///PATH), else Craft's CRAFT_DB_* or DB_*
// settings (DRIVER, SERVER or HOST, PORT, DATABASE, USER, PASSWORD, or a
// PDO DSN mysql:host=...;dbname=...). Caches: REDIS_URL, REDIS_DSN.
// Values other than the database's are not kept: a DSN holds passwords.
func ParseSymfonyEnv(kind, file string, src []byte) (*App, error) {
	return symfonyApp(kind, file, readEnv(src))
}

// ParseSymfonyEnvPHP reads Symfony's .env.local.php (composer
// dump-env: the array of the .env files' values it returns, which
// Symfony then reads in their place) as ParseSymfonyEnv reads a .env.
func ParseSymfonyEnvPHP(kind, file string, src []byte) (*App, error) {
	data := phpData(lexPHP(string(src)))
	var s settings
	for _, k := range data.order {
		if name, ok := strings.CutPrefix(k, "return."); ok && !strings.Contains(name, ".") {
			s.put(name, data.vals[k])
		}
	}
	return symfonyApp(kind, file, &s)
}

// symfonyApp reads the database and caches of s, a Symfony or Craft
// project's environment.
func symfonyApp(kind, file string, s *settings) (*App, error) {
	a := &App{Kind: kind, File: file}
	nl := &a.NotLiteral
	switch {
	case present(s, "DATABASE_URL") != "":
		a.Line = s.line("DATABASE_URL")
		v, ok := s.get("DATABASE_URL", nl)
		if ok {
			db, good := dbURL(v)
			if !good {
				*nl = appendOnce(*nl, "DATABASE_URL (not a URL phptune reads)")
			}
			a.DB = db
		}
	case present(s, "CRAFT_DB_DSN", "DB_DSN") != "":
		k := present(s, "CRAFT_DB_DSN", "DB_DSN")
		a.Line = s.line(k)
		if v, ok := s.get(k, nl); ok {
			a.DB = pdoDSN(v)
		}
		u := present(s, "CRAFT_DB_USER", "DB_USER", "DB_USERNAME")
		a.DB.User, _ = s.get(u, nl)
		if p, ok := s.get(present(s, "CRAFT_DB_PASSWORD", "DB_PASSWORD"), nl); ok {
			a.DB.Password = NewSecret(p)
		}
	case present(s, "CRAFT_DB_DATABASE", "DB_DATABASE", "DB_NAME") != "":
		name := present(s, "CRAFT_DB_DATABASE", "DB_DATABASE", "DB_NAME")
		a.Line = s.line(name)
		a.DB.Host = "localhost"
		s.readDB(&a.DB, dbSettings{Driver: present(s, "CRAFT_DB_DRIVER", "DB_DRIVER"), Name: name,
			User: present(s, "CRAFT_DB_USER", "DB_USER", "DB_USERNAME"), Password: present(s, "CRAFT_DB_PASSWORD", "DB_PASSWORD"),
			Host: present(s, "CRAFT_DB_SERVER", "DB_SERVER", "DB_HOST"), Port: present(s, "CRAFT_DB_PORT", "DB_PORT")}, nl)
	default:
		return nil, errNoApp(appName(kind)+" (DATABASE_URL, DB_DATABASE)", file)
	}
	for _, k := range []string{"REDIS_URL", "REDIS_DSN"} {
		if v, ok := s.get(k, nl); ok {
			n := len(a.Caches)
			a.addCache("redis", v, 6379, k)
			a.redisPassword(s, n, "", v)
		}
	}
	return a, nil
}

// dbURL reads Doctrine's DATABASE_URL. The password is percent-decoded
// and kept as a secret; ok is false for a value that is not such a URL
// (nothing of it is kept then: it may hold the password).
func dbURL(v string) (Database, bool) {
	scheme, rest, ok := strings.Cut(v, "://")
	if !ok || scheme == "" {
		return Database{}, false
	}
	db := Database{Driver: strings.TrimPrefix(strings.ToLower(scheme), "pdo-")}
	if db.Driver == "mysql2" {
		db.Driver = "mysql"
	}
	if db.Engine() == "sqlite" {
		// sqlite:///ABSOLUTE or sqlite://localhost/PATH: a file (its
		// path may hold Symfony's %kernel.project_dir%, not a URL's
		// escape).
		db.Name, _, _ = strings.Cut(strings.TrimPrefix(rest, "localhost"), "?")
		return db, true
	}
	u, err := url.Parse(v)
	if err != nil {
		return db, false
	}
	if u.User != nil {
		db.User = u.User.Username()
		if p, ok := u.User.Password(); ok {
			db.Password = NewSecret(p)
		}
	}
	db.Host = u.Hostname()
	db.Port = atoiOr0(u.Port())
	db.Name = strings.TrimPrefix(u.Path, "/")
	db.Socket = u.Query().Get("unix_socket")
	if db.Host == "" {
		db.Host = "localhost"
	}
	return db, true
}

// pdoDSN reads a PDO DSN: "mysql:host=H;port=P;dbname=N;unix_socket=S".
func pdoDSN(v string) Database {
	drv, rest, _ := strings.Cut(v, ":")
	db := Database{Driver: strings.ToLower(drv), Host: "localhost"}
	for _, kv := range strings.Split(rest, ";") {
		k, val, _ := strings.Cut(kv, "=")
		switch strings.TrimSpace(strings.ToLower(k)) {
		case "host":
			db.Host = val
		case "port":
			db.Port = atoiOr0(val)
		case "dbname":
			db.Name = val
		case "unix_socket":
			db.Socket = val
		}
	}
	return db
}
