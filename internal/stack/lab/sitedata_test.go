package lab

import (
	"reflect"
	"testing"
)

// TestSiteAccountHosts: the app's account exists for production's hosts,
// its endpoint's, and always localhost and 127.0.0.1, once each.
func TestSiteAccountHosts(t *testing.T) {
	tests := []struct {
		granted, implied, want []string
	}{
		{nil, nil, []string{"localhost", "127.0.0.1"}},
		{nil, []string{"localhost"}, []string{"localhost", "127.0.0.1"}},
		{[]string{"%"}, []string{"localhost", "127.0.0.1"}, []string{"%", "localhost", "127.0.0.1"}},
		{[]string{"127.0.0.1"}, []string{"localhost"}, []string{"127.0.0.1", "localhost"}},
		{[]string{""}, nil, []string{"localhost", "127.0.0.1"}},
	}
	for _, tc := range tests {
		if got := siteAccountHosts(tc.granted, tc.implied); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("siteAccountHosts(%v, %v) = %v, want %v", tc.granted, tc.implied, got, tc.want)
		}
	}
}

// TestIsPrependLine: the live pool's own prepend lines are recognised
// (the lab's WP-cron prepend chains the file instead).
func TestIsPrependLine(t *testing.T) {
	tests := map[string]bool{
		"php_admin_value[auto_prepend_file] = /srv/waf.php": true,
		"php_value[auto_prepend_file]=/x.php":               true,
		"php_admin_value[upload_max_filesize] = 64M":        false,
		"php_admin_value[auto_append_file] = /x.php":        false,
	}
	for line, want := range tests {
		if got := isPrependLine(line); got != want {
			t.Errorf("isPrependLine(%q) = %v, want %v", line, got, want)
		}
	}
}
