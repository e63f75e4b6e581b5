package cli

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/phptune/phptune/internal/stack/lab"
	"github.com/phptune/phptune/internal/stack/labstack"
)

// TestSealedSaysCaches: a site lab's summary states what each cache
// server the site names leads to, one line each, through termsafe (the
// addresses come from the site's own files); a run's warnings carry them
// for a sealed lab only.
func TestSealedSaysCaches(t *testing.T) {
	l := &lab.Lab{Name: "lab", Seal: t.TempDir(), SiteCaches: []string{
		"the site names Redis at unix:/var/run/redis/redis.sock (WP_REDIS_PATH): inside the seal that path leads nowhere; the lab starts no cache",
		"the site names Memcached at tcp:127.0.0.1:11211 (MEMCACHED_HOST\x1b[2J): refused",
	}}
	var out bytes.Buffer
	printSealed(context.Background(), &out, l)
	text := out.String()
	if !strings.Contains(text, "\ncache:      the site names Redis at unix:/var/run/redis/redis.sock (WP_REDIS_PATH): inside the seal that path leads nowhere") ||
		!strings.Contains(text, "\n            the site names Memcached at tcp:127.0.0.1:11211") {
		t.Errorf("printSealed does not state the caches:\n%s", text)
	}
	if strings.Contains(text, "\x1b") {
		t.Errorf("printSealed printed a terminal escape from the site's configuration:\n%q", text)
	}
	if got := labstack.CacheWarnings(l); len(got) != 2 {
		t.Errorf("CacheWarnings of a sealed lab = %q", got)
	}
	l.Seal = ""
	if got := labstack.CacheWarnings(l); got != nil {
		t.Errorf("CacheWarnings of an unsealed lab = %q", got)
	}
}
