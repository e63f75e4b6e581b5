// Package cachestat reads a Redis or Memcached server's hit, miss,
// eviction and memory counters over a connection the caller opens (a
// site lab's own cache, inside its seal): Redis's INFO stats and INFO
// memory (RESP), Memcached's stats (its text protocol), nothing else
// sent, one second for the whole exchange.
package cachestat

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"
)

// Timeout bounds one reading: the write, and every answer.
const Timeout = time.Second

// maxReply bounds one answer (Redis's INFO memory is ~1.5 KiB).
const maxReply = 1 << 20

// maxLines bounds the lines of Memcached's stats (~90).
const maxLines = 4096

// Counters are one reading of a cache server's counters.
type Counters struct {
	// Hits and Misses are lookups that found a key or did not (Redis's
	// keyspace_hits/keyspace_misses, Memcached's get_hits/get_misses),
	// Evictions keys dropped for room (evicted_keys, evictions): all
	// counted since the server started.
	Hits, Misses, Evictions int64
	// UsedBytes is the memory it holds now (Redis's used_memory,
	// Memcached's bytes of items); MaxBytes its cap (maxmemory,
	// limit_maxbytes; 0: none).
	UsedBytes, MaxBytes int64
}

// ErrPassword is Redis's answer when it asks for a password: the
// counters are not read (only INFO is ever sent, never AUTH).
var ErrPassword = errors.New("the server asks for a password (NOAUTH): its counters are not read")

// Read sends kind's ("redis" or "memcached") counter requests on conn
// and reads the answers, within Timeout and ctx. conn is the caller's to
// close.
func Read(ctx context.Context, kind string, conn net.Conn) (Counters, error) {
	deadline := time.Now().Add(Timeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	if err := conn.SetDeadline(deadline); err != nil {
		return Counters{}, err
	}
	stop := context.AfterFunc(ctx, func() { conn.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	r := bufio.NewReader(io.LimitReader(conn, 4*maxReply))
	switch kind {
	case "redis":
		// Two INFO commands: Redis before 7 takes one section each.
		if _, err := io.WriteString(conn, "*2\r\n$4\r\nINFO\r\n$5\r\nstats\r\n*2\r\n$4\r\nINFO\r\n$6\r\nmemory\r\n"); err != nil {
			return Counters{}, err
		}
		var text []byte
		for range 2 {
			b, err := ReadBulk(r)
			if err != nil {
				return Counters{}, err
			}
			text = append(append(text, b...), '\n')
		}
		return ParseRedisInfo(text)
	case "memcached":
		if _, err := io.WriteString(conn, "stats\r\n"); err != nil {
			return Counters{}, err
		}
		return ReadMemcachedStats(r)
	}
	return Counters{}, fmt.Errorf("cache kind %q: want redis or memcached", kind)
}

// ReadBulk reads one RESP reply that should be a bulk string
// ("$N\r\n" N bytes "\r\n") and returns its bytes. An error reply
// ("-ERR …") is an error (NOAUTH: ErrPassword); any other reply, or a
// length over maxReply, is a protocol error.
func ReadBulk(r *bufio.Reader) ([]byte, error) {
	line, err := readLine(r)
	if err != nil {
		return nil, err
	}
	switch {
	case strings.HasPrefix(line, "-NOAUTH"):
		return nil, ErrPassword
	case strings.HasPrefix(line, "-"):
		return nil, fmt.Errorf("redis answered %q", clip(line[1:]))
	case !strings.HasPrefix(line, "$"):
		return nil, fmt.Errorf("redis answered %q, not a bulk string", clip(line))
	}
	n, err := strconv.Atoi(line[1:])
	if err != nil || n < 0 || n > maxReply {
		return nil, fmt.Errorf("redis answered a bulk string of length %q", clip(line[1:]))
	}
	b := make([]byte, n+2)
	if _, err := io.ReadFull(r, b); err != nil {
		return nil, err
	}
	if string(b[n:]) != "\r\n" {
		return nil, errors.New("redis's bulk string does not end in CRLF")
	}
	return b[:n], nil
}

// readLine reads one CRLF-terminated line, at most maxReply bytes.
func readLine(r *bufio.Reader) (string, error) {
	var b []byte
	for {
		chunk, isPrefix, err := r.ReadLine()
		if err != nil {
			return "", err
		}
		b = append(b, chunk...)
		if len(b) > maxReply {
			return "", errors.New("an answer's line is too long")
		}
		if !isPrefix {
			return string(b), nil
		}
	}
}

// clip is s cut to 80 bytes for a message (which quotes it).
func clip(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}

// ParseRedisInfo reads the counters from INFO's text ("name:value"
// lines, "# Section" headers): keyspace_hits, keyspace_misses,
// evicted_keys, used_memory and maxmemory. A missing hit or miss
// counter is an error.
func ParseRedisInfo(text []byte) (Counters, error) {
	var c Counters
	fields := map[string]*int64{"keyspace_hits": &c.Hits, "keyspace_misses": &c.Misses, "evicted_keys": &c.Evictions,
		"used_memory": &c.UsedBytes, "maxmemory": &c.MaxBytes}
	seen := map[string]bool{}
	for _, line := range strings.Split(string(text), "\n") {
		name, val, ok := strings.Cut(strings.TrimRight(line, "\r"), ":")
		p := fields[name]
		if !ok || p == nil {
			continue
		}
		n, err := strconv.ParseInt(val, 10, 64)
		if err != nil || n < 0 {
			return Counters{}, fmt.Errorf("INFO's %s is %q, not a count", name, clip(val))
		}
		*p, seen[name] = n, true
	}
	if !seen["keyspace_hits"] || !seen["keyspace_misses"] {
		return Counters{}, errors.New("INFO has no keyspace_hits and keyspace_misses")
	}
	return c, nil
}

// ReadMemcachedStats reads the answer to stats: "STAT name value" lines
// up to "END", at most maxLines: get_hits, get_misses, evictions, bytes
// and limit_maxbytes. An error line (ERROR, CLIENT_ERROR, SERVER_ERROR)
// or a missing hit or miss counter is an error.
func ReadMemcachedStats(r *bufio.Reader) (Counters, error) {
	var c Counters
	fields := map[string]*int64{"get_hits": &c.Hits, "get_misses": &c.Misses, "evictions": &c.Evictions,
		"bytes": &c.UsedBytes, "limit_maxbytes": &c.MaxBytes}
	seen := map[string]bool{}
	for range maxLines {
		line, err := readLine(r)
		if err != nil {
			return Counters{}, err
		}
		if line == "END" {
			if !seen["get_hits"] || !seen["get_misses"] {
				return Counters{}, errors.New("memcached's stats have no get_hits and get_misses")
			}
			return c, nil
		}
		f := strings.Fields(line)
		if len(f) != 3 || f[0] != "STAT" {
			return Counters{}, fmt.Errorf("memcached answered %q", clip(line))
		}
		if p := fields[f[1]]; p != nil {
			n, err := strconv.ParseInt(f[2], 10, 64)
			if err != nil || n < 0 {
				return Counters{}, fmt.Errorf("memcached's %s is %q, not a count", f[1], clip(f[2]))
			}
			*p, seen[f[1]] = n, true
		}
	}
	return Counters{}, fmt.Errorf("memcached's stats are longer than %d lines", maxLines)
}

// Delta is what the counters counted from start to end: hits, misses
// and evictions as differences, memory as at end. ok is false when a
// counter went back (the server restarted in between).
func Delta(start, end Counters) (Counters, bool) {
	d := Counters{Hits: end.Hits - start.Hits, Misses: end.Misses - start.Misses, Evictions: end.Evictions - start.Evictions,
		UsedBytes: end.UsedBytes, MaxBytes: end.MaxBytes}
	return d, d.Hits >= 0 && d.Misses >= 0 && d.Evictions >= 0
}

// HitRatio is hits / (hits + misses), 0 without lookups.
func (c Counters) HitRatio() float64 {
	if c.Hits+c.Misses <= 0 {
		return 0
	}
	return float64(c.Hits) / float64(c.Hits+c.Misses)
}
