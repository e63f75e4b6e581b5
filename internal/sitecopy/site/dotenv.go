package site

import (
	"bufio"
	"bytes"
	"strings"
)

// ParseDotEnv reads a Laravel .env: KEY=VALUE lines ("export " allowed,
// "#" comments), values unquoted (cut at " #"), in single quotes (as
// written) or in double quotes (\n, \", \\ unescaped). A value that
// refers to another (${OTHER}) is named in NotLiteral. The first
// definition of a key wins, as phpdotenv's immutable loader does. An
// unset DB_HOST/DB_PORT is Laravel's default (127.0.0.1, 3306).
func ParseDotEnv(file string, src []byte) (*App, error) {
	s := readEnv(src)
	_, hasConn := s.vals["DB_CONNECTION"]
	_, hasName := s.vals["DB_DATABASE"]
	if !hasConn && !hasName {
		return nil, errNoApp("Laravel (DB_CONNECTION, DB_DATABASE)", file)
	}
	a := &App{Kind: "laravel", File: file, Line: s.line("DB_DATABASE")}
	if a.Line == 0 {
		a.Line = s.line("DB_CONNECTION")
	}
	return laravelEnv(a, s), nil
}

// readEnv reads a .env file's KEY=VALUE lines, the first of each key,
// with the line each is on.
func readEnv(src []byte) *settings {
	var s settings
	sc := bufio.NewScanner(bytes.NewReader(src))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		line = strings.TrimPrefix(line, "export ")
		key, raw, ok := strings.Cut(line, "=")
		key = strings.TrimSpace(key)
		if !ok || key == "" || strings.ContainsAny(key, " \t\"'") {
			continue
		}
		v := envValue(strings.TrimSpace(raw))
		v.line = n
		s.put(key, v)
	}
	return &s
}

// laravelEnv reads Laravel's settings from s into a.
func laravelEnv(a *App, s *settings) *App {
	nl := &a.NotLiteral
	a.DB.Host = "127.0.0.1"
	s.readDB(&a.DB, dbSettings{Driver: "DB_CONNECTION", Name: "DB_DATABASE", User: "DB_USERNAME", Password: "DB_PASSWORD",
		Host: "DB_HOST", Port: "DB_PORT", Socket: "DB_SOCKET"}, nl)
	used := map[string]bool{"DB_CONNECTION": true, "DB_DATABASE": true, "DB_USERNAME": true, "DB_PASSWORD": true,
		"DB_HOST": true, "DB_PORT": true, "DB_SOCKET": true}
	// Redis: named by a driver that uses it, or by REDIS_HOST.
	var redisBy []string
	for _, k := range []string{"CACHE_STORE", "CACHE_DRIVER", "SESSION_DRIVER", "QUEUE_CONNECTION", "BROADCAST_CONNECTION"} {
		if v, ok := s.get(k, nl); ok && v == "redis" {
			redisBy = append(redisBy, k)
		}
	}
	if h, ok := s.get("REDIS_HOST", nl); ok && h != "" && h != "null" {
		port, _ := s.get("REDIS_PORT", nl)
		a.Caches = append(a.Caches, Cache{Kind: "redis", Addr: tcpAddr(h, port, 6379), Setting: strings.Join(append([]string{"REDIS_HOST"}, redisBy...), ", ")})
	} else if len(redisBy) > 0 {
		a.Caches = append(a.Caches, Cache{Kind: "redis", Addr: "tcp:127.0.0.1:6379", Setting: strings.Join(redisBy, ", ") + " (REDIS_HOST unset: Laravel's default)"})
	}
	if pw, ok := s.get("REDIS_PASSWORD", nl); ok && pw != "" && pw != "null" {
		for i := range a.Caches {
			if a.Caches[i].Kind == "redis" {
				a.Caches[i].Password = NewSecret(pw)
			}
		}
	}
	var memBy []string
	for _, k := range []string{"CACHE_STORE", "CACHE_DRIVER", "SESSION_DRIVER"} {
		if v, ok := s.get(k, nl); ok && v == "memcached" {
			memBy = append(memBy, k)
		}
	}
	if h, ok := s.get("MEMCACHED_HOST", nl); ok && h != "" || len(memBy) > 0 {
		if h == "" {
			h = "127.0.0.1"
		}
		port, _ := s.get("MEMCACHED_PORT", nl)
		a.Caches = append(a.Caches, Cache{Kind: "memcached", Addr: tcpAddr(h, port, 11211), Setting: strings.Join(append([]string{"MEMCACHED_HOST"}, memBy...), ", ")})
	}
	a.Settings = s.otherSettings(used)
	return a
}

// envValue reads one .env value.
func envValue(raw string) value {
	switch {
	case strings.HasPrefix(raw, "'"):
		v, _, _ := strings.Cut(raw[1:], "'")
		return value{text: v, literal: true}
	case strings.HasPrefix(raw, `"`):
		var b strings.Builder
		for i := 1; i < len(raw); i++ {
			c := raw[i]
			if c == '"' {
				break
			}
			if c == '\\' && i+1 < len(raw) {
				i++
				switch raw[i] {
				case 'n':
					b.WriteByte('\n')
				case 't':
					b.WriteByte('\t')
				default:
					b.WriteByte(raw[i])
				}
				continue
			}
			b.WriteByte(c)
		}
		v := b.String()
		return value{text: v, literal: !strings.Contains(v, "${")}
	}
	if i := strings.Index(raw, " #"); i >= 0 {
		raw = strings.TrimSpace(raw[:i])
	}
	return value{text: raw, literal: !strings.Contains(raw, "${")}
}
