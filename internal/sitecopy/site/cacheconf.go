package site

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// The memory production gives its caches, read from their configuration
// as data: redis.conf's maxmemory and maxmemory-policy, Memcached's -m
// (its command line, memcached.conf). phptune never connects to
// production's cache.

// RedisPolicies are the maxmemory-policy values Redis knows; any other
// value is not kept (a lab writes the policy into its own redis.conf).
var RedisPolicies = []string{"noeviction", "allkeys-lru", "volatile-lru", "allkeys-lfu", "volatile-lfu", "allkeys-random", "volatile-random", "volatile-ttl"}

// RedisDirective is one directive of redis.conf that sizing reads:
// maxmemory, maxmemory-policy or include, with its 1-based line.
type RedisDirective struct {
	Line  int
	Name  string // lower case
	Value string // its first argument, unquoted
}

// maxConfLines bounds the lines of one configuration file read.
const maxConfLines = 100000

// ParseRedisConf returns the directives of redis.conf text that sizing
// reads (maxmemory, maxmemory-policy, include), in file order: a
// directive's name is case-insensitive, its first argument may be
// quoted, "#" starts a comment line. Other lines are skipped, never
// kept: the file also holds the server's password.
func ParseRedisConf(data []byte) []RedisDirective {
	var out []RedisDirective
	for i, line := range strings.SplitN(string(data), "\n", maxConfLines) {
		f := strings.Fields(line)
		if len(f) < 2 || strings.HasPrefix(f[0], "#") {
			continue
		}
		name := strings.ToLower(f[0])
		switch name {
		case "maxmemory", "maxmemory-policy", "include":
		default:
			continue
		}
		out = append(out, RedisDirective{Line: i + 1, Name: name, Value: unquoteRedis(f[1])})
	}
	return out
}

// unquoteRedis strips one pair of matching quotes around a redis.conf
// argument (no escapes: the values read hold none).
func unquoteRedis(s string) string {
	if len(s) >= 2 && (s[0] == '"' || s[0] == '\'') && s[len(s)-1] == s[0] {
		return s[1 : len(s)-1]
	}
	return s
}

// ParseRedisBytes reads a redis.conf memory value: a number of bytes,
// or with a unit as Redis reads it (case-insensitive): 1k = 1000, 1kb =
// 1024, 1m = 1000000, 1mb = 1024², 1g = 10⁹, 1gb = 1024³.
func ParseRedisBytes(s string) (int64, error) {
	low := strings.ToLower(strings.TrimSpace(s))
	units := []struct {
		suffix string
		mul    int64
	}{{"kb", 1 << 10}, {"mb", 1 << 20}, {"gb", 1 << 30}, {"k", 1e3}, {"m", 1e6}, {"g", 1e9}, {"b", 1}}
	mul := int64(1)
	for _, u := range units {
		if n, ok := strings.CutSuffix(low, u.suffix); ok {
			low, mul = n, u.mul
			break
		}
	}
	n, err := strconv.ParseInt(low, 10, 64)
	if err != nil || n < 0 || low == "" || low[0] == '+' {
		return 0, fmt.Errorf("memory value %q: want a number of bytes, or with k, kb, m, mb, g or gb", s)
	}
	if n > math.MaxInt64/mul {
		return 0, fmt.Errorf("memory value %q is too large", s)
	}
	return n * mul, nil
}

// MemcachedMemory is what Memcached's options say of its memory.
type MemcachedMemory struct {
	// MiB is -m (--memory-limit), 0 when not given (Memcached's default
	// is 64).
	MiB int64
	// NoEvict is -M (--disable-evictions): a full cache refuses writes.
	NoEvict bool
	// Arg is the index of the -m argument (or line, for memcached.conf:
	// see ParseMemcachedConf), -1 when not given.
	Arg int
}

// memcachedMaxMiB bounds -m: Memcached's own limit is far below it.
const memcachedMaxMiB = 1 << 30

// ParseMemcachedArgs reads Memcached's memory options from its
// arguments (argv[0] excluded): "-m N", "-mN", "--memory-limit=N",
// "--memory-limit N" (N MiB; the last one counts), and "-M" or
// "--disable-evictions". A value that is not a number is an error.
func ParseMemcachedArgs(args []string) (MemcachedMemory, error) {
	m := MemcachedMemory{Arg: -1}
	for i := 0; i < len(args); i++ {
		a := args[i]
		val, at := "", i
		switch {
		case a == "-M" || a == "--disable-evictions":
			m.NoEvict = true
			continue
		case a == "-m" || a == "--memory-limit":
			if i+1 >= len(args) {
				return m, fmt.Errorf("%s without a value", a)
			}
			i++
			val = args[i]
		case strings.HasPrefix(a, "--memory-limit="):
			val = strings.TrimPrefix(a, "--memory-limit=")
		case strings.HasPrefix(a, "-m") && !strings.HasPrefix(a, "--"):
			val = a[2:]
		default:
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSpace(val), 10, 64)
		if err != nil || n <= 0 || n > memcachedMaxMiB {
			return m, fmt.Errorf("-m %q: want a number of MiB", val)
		}
		m.MiB, m.Arg = n, at
	}
	return m, nil
}

// ParseMemcachedConf reads Debian's /etc/memcached.conf, one option a
// line ("-m 64"; "#" starts a comment; lines without a leading "-",
// such as "logfile", are the start script's), as ParseMemcachedArgs
// does; Arg is then the 1-based line of -m.
func ParseMemcachedConf(data []byte) (MemcachedMemory, error) {
	m := MemcachedMemory{Arg: -1}
	for i, line := range strings.SplitN(string(data), "\n", maxConfLines) {
		f := strings.Fields(line)
		if len(f) == 0 || !strings.HasPrefix(f[0], "-") {
			continue
		}
		got, err := ParseMemcachedArgs(f)
		if err != nil {
			return m, fmt.Errorf("line %d: %w", i+1, err)
		}
		if got.Arg >= 0 {
			m.MiB, m.Arg = got.MiB, i+1
		}
		m.NoEvict = m.NoEvict || got.NoEvict
	}
	return m, nil
}

// redisConfArg finds the configuration file in a Redis server's command
// line: the first argument after argv[0] that does not start with "-",
// or, in a title Redis rewrote (its proc-title-template's
// {config-file}), an absolute path ending in ".conf" among its words.
func redisConfArg(args []string) string {
	if len(args) > 1 && !strings.HasPrefix(args[1], "-") && strings.HasPrefix(args[1], "/") {
		return args[1]
	}
	words := strings.Fields(strings.Join(args, " "))
	for _, w := range words[min(1, len(words)):] {
		if strings.HasPrefix(w, "/") && strings.HasSuffix(w, ".conf") {
			return w
		}
	}
	return ""
}

// redisArgOptions are the --maxmemory and --maxmemory-policy of a Redis
// command line that was not rewritten (they override the file's).
func redisArgOptions(args []string) (maxmemory, policy string) {
	for i := 1; i+1 < len(args); i++ {
		switch strings.ToLower(args[i]) {
		case "--maxmemory":
			maxmemory = args[i+1]
		case "--maxmemory-policy":
			policy = args[i+1]
		}
	}
	return maxmemory, policy
}
