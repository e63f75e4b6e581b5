package lab

import (
	"strings"
	"testing"

	"github.com/phptune/phptune/internal/sitecopy/site"
)

func TestSiteCaches(t *testing.T) {
	s := &site.Site{DocRoot: site.DocRoot{Path: "/srv/app/public"}, Caches: []site.Cache{
		{Kind: "redis", Addr: "unix:/srv/app/storage/redis.sock", Setting: "REDIS_HOST"},
		{Kind: "memcached", Addr: "tcp:127.0.0.1:11211", Setting: "MEMCACHED_HOST"},
	}}
	for _, c := range []struct {
		appRoot string
		first   string
	}{
		{"/srv/app", "in the app's overlay"},
		{"", "leads nowhere"}, // the overlay is the docroot: storage/ is not in it
	} {
		got := siteCaches(s, c.appRoot)
		if len(got) != 2 || !strings.Contains(got[0], c.first) || !strings.Contains(got[1], "Memcached at tcp:127.0.0.1:11211 (MEMCACHED_HOST)") {
			t.Errorf("siteCaches(app root %q) = %q", c.appRoot, got)
		}
	}
	if got := siteCaches(&site.Site{}, ""); got != nil {
		t.Errorf("a site naming no cache: %q", got)
	}
}
