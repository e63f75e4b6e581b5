package lab

import "github.com/phptune/phptune/internal/sitecopy/site"

// siteCaches say what each cache server the site names leads to inside
// its lab's seal, whose overlay is appRoot (else the site's docroot).
// The lab starts no Redis or Memcached of its own (none is installed by
// phptune's setup): a site that uses one is measured without it, and
// lab up, lab status and every run's warnings say so.
func siteCaches(s *site.Site, appRoot string) []string {
	overlay := appRoot
	if overlay == "" {
		overlay = s.DocRoot.Path
	}
	var out []string
	for _, c := range s.Caches {
		out = append(out, site.CacheInSeal(c, overlay))
	}
	return out
}
