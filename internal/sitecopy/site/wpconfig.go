package site

// ParseWPConfig reads a WordPress wp-config.php: its define('NAME',
// value) calls and $table_prefix, by PHP's tokens (comments skipped,
// quotes and escapes as PHP reads them). A value that is not one literal
// (getenv('DB_HOST'), a concatenation, a constant) is named in
// NotLiteral, never guessed. Only the first define of a name counts, as
// in PHP. Caches: WP_REDIS_HOST/PORT/PATH (Redis Object Cache and
// friends), WP_REDIS_SERVERS and WP_REDIS_CLUSTER (arrays of addresses:
// their literal strings), WP_CACHE_HOST and the Memcached drop-in's
// $memcached_servers (the literal strings of its array), and WP_CACHE
// named as a setting.
func ParseWPConfig(file string, src []byte) (*App, error) {
	toks := lexPHP(string(src))
	var s settings
	// lists are the literal strings of the array settings that name
	// cache servers.
	lists := map[string][]string{}
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		switch {
		case t.kind == 'w' && (t.text == "define" || t.text == "DEFINE") && i+4 < len(toks) &&
			toks[i+1].text == "(" && toks[i+2].kind == 's' && toks[i+3].text == ",":
			expr, end := untilClose(toks, i+4)
			v := exprValue(expr)
			v.line = t.line
			s.put(toks[i+2].text, v)
			if n := toks[i+2].text; (n == "WP_REDIS_SERVERS" || n == "WP_REDIS_CLUSTER") && lists[n] == nil {
				lists[n] = literalStrings(expr)
			}
			i = end
		case t.kind == 'v' && t.text == "memcached_servers" && i+2 < len(toks) && toks[i+1].text == "=" && lists["$memcached_servers"] == nil:
			expr, end := untilSemicolon(toks, i+2)
			lists["$memcached_servers"] = literalStrings(expr)
			i = end
		case t.kind == 'v' && t.text == "table_prefix" && i+2 < len(toks) && toks[i+1].text == "=":
			expr, end := untilSemicolon(toks, i+2)
			s.put("$table_prefix", exprValue(expr))
			i = end
		}
	}
	if _, ok := s.vals["DB_NAME"]; !ok {
		return nil, errNoApp("WordPress (define('DB_NAME', ...))", file)
	}
	a := &App{Kind: "wordpress", File: file, Line: s.line("DB_NAME"), DB: Database{Driver: "mysql"}}
	nl := &a.NotLiteral
	a.DB.Name, _ = s.get("DB_NAME", nl)
	a.DB.User, _ = s.get("DB_USER", nl)
	if p, ok := s.get("DB_PASSWORD", nl); ok {
		a.DB.Password = NewSecret(p)
	}
	if h, ok := s.get("DB_HOST", nl); ok {
		a.DB.Host = h
		_, a.DB.Port, a.DB.Socket = SplitWPHost(h)
	} else if _, set := s.vals["DB_HOST"]; !set {
		a.DB.Host = "localhost" // wp-config-sample's value; wpdb needs one
	}
	a.TablePrefix, _ = s.get("$table_prefix", nl)
	used := map[string]bool{"DB_NAME": true, "DB_USER": true, "DB_PASSWORD": true, "DB_HOST": true, "$table_prefix": true,
		"WP_REDIS_HOST": true, "WP_REDIS_PORT": true, "WP_REDIS_PATH": true, "WP_CACHE_HOST": true,
		"WP_REDIS_SERVERS": true, "WP_REDIS_CLUSTER": true}
	_, a.cacheKeySalt = s.vals["WP_CACHE_KEY_SALT"]
	listed := func(kind, name string, defPort int) {
		n := 0
		if l, ok := lists[name]; ok && len(l) == 0 {
			*nl = appendOnce(*nl, name) // an array of computed addresses
		}
		for _, it := range lists[name] {
			addr, ok := CacheAddr(it, defPort)
			if !ok || n == maxCacheAddrs {
				continue
			}
			n++
			a.Caches = append(a.Caches, Cache{Kind: kind, Addr: addr, Setting: name})
		}
	}
	listed("redis", "WP_REDIS_SERVERS", 6379)
	listed("redis", "WP_REDIS_CLUSTER", 6379)
	listed("memcached", "$memcached_servers", 11211)
	if h, ok := s.get("WP_REDIS_PATH", nl); ok && h != "" {
		a.Caches = append(a.Caches, Cache{Kind: "redis", Addr: "unix:" + h, Setting: "WP_REDIS_PATH"})
	} else if h, ok := s.get("WP_REDIS_HOST", nl); ok && h != "" {
		port, _ := s.get("WP_REDIS_PORT", nl)
		a.Caches = append(a.Caches, Cache{Kind: "redis", Addr: tcpAddr(h, port, 6379), Setting: "WP_REDIS_HOST"})
	}
	if h, ok := s.get("WP_CACHE_HOST", nl); ok && h != "" {
		a.Caches = append(a.Caches, Cache{Kind: "memcached", Addr: tcpAddr(h, "", 11211), Setting: "WP_CACHE_HOST"})
	}
	// WP_REDIS_PASSWORD is every Redis client's of wp-config (Redis
	// Object Cache's and its forks'), read when it is one literal string
	// (an array of a user and a password, Redis's ACL, is named in
	// NotLiteral like any computed value).
	used["WP_REDIS_PASSWORD"] = true
	if pw, ok := s.get("WP_REDIS_PASSWORD", nl); ok && pw != "" {
		for i := range a.Caches {
			if a.Caches[i].Kind == "redis" {
				a.Caches[i].Password = NewSecret(pw)
			}
		}
	}
	a.Settings = s.otherSettings(used)
	return a, nil
}

// untilClose returns the tokens from i up to the ")" that closes the call
// whose arguments start at i, and that ")"'s index.
func untilClose(toks []phpTok, i int) ([]phpTok, int) {
	depth := 0
	for j := i; j < len(toks); j++ {
		switch toks[j].text {
		case "(", "[":
			if toks[j].kind == 'p' {
				depth++
			}
		case ")", "]":
			if toks[j].kind != 'p' {
				continue
			}
			if depth == 0 {
				return toks[i:j], j
			}
			depth--
		}
	}
	return toks[i:], len(toks)
}

// untilSemicolon returns the tokens from i up to the next ";" and its
// index.
func untilSemicolon(toks []phpTok, i int) ([]phpTok, int) {
	for j := i; j < len(toks); j++ {
		if toks[j].kind == 'p' && toks[j].text == ";" {
			return toks[i:j], j
		}
	}
	return toks[i:], len(toks)
}

// exprValue is an expression's value when it is one literal: a string
// (not interpolating), a number, true, false or null.
func exprValue(expr []phpTok) value {
	if len(expr) == 0 {
		return value{}
	}
	if len(expr) != 1 {
		return value{line: expr[0].line}
	}
	t := expr[0]
	switch t.kind {
	case 's':
		return value{text: t.text, literal: t.literal, line: t.line}
	case 'n':
		return value{text: t.text, literal: true, line: t.line}
	case 'w':
		switch lower(t.text) {
		case "true", "false", "null":
			return value{text: lower(t.text), literal: true, line: t.line}
		}
		return value{word: t.text, line: t.line}
	}
	return value{line: t.line}
}

func lower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 32
		}
	}
	return string(b)
}

// literalStrings are the literal string tokens of an expression that
// are not an array's keys (the elements of an array of addresses; its
// keys, 'default' => ..., name a group), at most maxCacheAddrs.
func literalStrings(expr []phpTok) []string {
	out := []string{} // not nil: the setting was found
	for i, t := range expr {
		if i+1 < len(expr) && expr[i+1].kind == 'p' && expr[i+1].text == "=>" {
			continue
		}
		// An argument of a call (getenv('REDIS_URL')) is no address.
		if i >= 2 && expr[i-1].text == "(" && expr[i-2].kind == 'w' && lower(expr[i-2].text) != "array" {
			continue
		}
		if t.kind == 's' && t.literal && len(out) < maxCacheAddrs {
			out = append(out, t.text)
		}
	}
	return out
}
