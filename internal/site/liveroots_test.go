package site

import (
	"reflect"
	"testing"
)

func TestOverlapping(t *testing.T) {
	roots := []LiveRoot{{Dir: "/var/www/site", Site: "site.test"}, {Dir: "/srv/app/public", Site: "app.test"}, {Dir: "/var/www/html", Site: "default"}}
	cases := []struct {
		dir  string
		want []string
	}{
		{"/var/www/site", []string{"site.test"}},
		{"/var/www/site/", []string{"site.test"}},
		{"/var/www/site/wp-admin", []string{"site.test"}}, // inside
		{"/var/www", []string{"site.test", "default"}},    // contains
		{"/srv/app", []string{"app.test"}},
		{"/var/www/sites", nil}, // a sibling whose name starts alike
		{"/srv/staging/public", nil},
		{"/", []string{"site.test", "app.test", "default"}},
	}
	for _, c := range cases {
		var got []string
		for _, r := range Overlapping(roots, c.dir) {
			got = append(got, r.Site)
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("Overlapping(%q) = %q, want %q", c.dir, got, c.want)
		}
	}
}
