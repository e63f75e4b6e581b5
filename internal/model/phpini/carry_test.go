package phpini

import (
	"reflect"
	"strings"
	"testing"
)

func TestCarry(t *testing.T) {
	stock := Parse([]byte("memory_limit = 128M\nerror_reporting = E_ALL & ~E_DEPRECATED & ~E_STRICT\nmax_execution_time = 30\nsession.sid_length = 26\n"))
	target := Parse([]byte("memory_limit = 128M\nerror_reporting = E_ALL & ~E_DEPRECATED\nmax_execution_time = 30\n"))
	live := []File{
		{"/etc/php/8.2/fpm/php.ini", Parse([]byte("memory_limit = 256M\nerror_reporting = E_ALL & ~E_DEPRECATED & ~E_STRICT\nmax_execution_time = 60\nsession.sid_length = 32\nextension_dir = /x\n"))},
		{"/etc/php/8.2/fpm/conf.d/10-opcache.ini", Parse([]byte("zend_extension=opcache.so\n"))},
		{"/etc/php/8.2/fpm/conf.d/99-site.ini", Parse([]byte("max_execution_time = 30\nupload_max_filesize = \"64M\"\nopcache.consistency_checks = 1\napcu.shm_size = 64M\n"))},
	}
	known := map[string]bool{"memory_limit": true, "error_reporting": true, "max_execution_time": true, "session.sid_length": true, "upload_max_filesize": true}
	got := Carry(CarryInput{Live: live, LiveStock: stock, Target: target, Known: known, To: "8.4"})
	// max_execution_time: php.ini's 60, then 99-site.ini's 30 (Debian's
	// and the target's): not carried. error_reporting: Debian 12's stock
	// value, not carried (Debian 13's stays).
	want := []string{"memory_limit = 256M", "session.sid_length = 32", `upload_max_filesize = "64M"`}
	if !reflect.DeepEqual(got.Lines, want) {
		t.Errorf("lines = %q, want %q", got.Lines, want)
	}
	if len(got.Dropped) != 2 || !strings.HasPrefix(got.Dropped[0], "apcu.shm_size (/etc/php/8.2/fpm/conf.d/99-site.ini:4): PHP 8.4 here has no such setting") ||
		!strings.HasPrefix(got.Dropped[1], "opcache.consistency_checks (/etc/php/8.2/fpm/conf.d/99-site.ini:3)") {
		t.Errorf("dropped = %q", got.Dropped)
	}
	if len(got.Deprecated) != 1 || !strings.Contains(got.Deprecated[0], "session.sid_length = 32 (/etc/php/8.2/fpm/php.ini:4): deprecated since PHP 8.4") {
		t.Errorf("deprecated = %q", got.Deprecated)
	}
	if got.Settings[0] != "memory_limit (/etc/php/8.2/fpm/php.ini:1)" {
		t.Errorf("settings = %q", got.Settings)
	}

	// Known unknown (an old root's manifest): everything different is
	// carried, nothing dropped.
	all := Carry(CarryInput{Live: live, LiveStock: stock, Target: target, To: "8.4"})
	if len(all.Dropped) != 0 || len(all.Lines) != 5 {
		t.Errorf("without Known: lines %q dropped %q", all.Lines, all.Dropped)
	}
}

// TestCarryControlCharacter: a value with a control character (PHP
// would read it otherwise, or not at all) is listed, not carried.
func TestCarryControlCharacter(t *testing.T) {
	live := []File{{"/etc/php/8.2/fpm/conf.d/99-x.ini", []Entry{{Key: "user_agent", Value: "a\x00b", Raw: "\"a\x00b\"", Line: 1}, {Key: "error_reporting", Value: "E_ALL\t& ~E_NOTICE", Raw: "E_ALL\t& ~E_NOTICE", Line: 2}}}}
	got := Carry(CarryInput{Live: live, To: "8.4"})
	if !reflect.DeepEqual(got.Lines, []string{"error_reporting = E_ALL\t& ~E_NOTICE"}) || len(got.Dropped) != 1 || !strings.Contains(got.Dropped[0], "user_agent (/etc/php/8.2/fpm/conf.d/99-x.ini:1): its value holds a control character") {
		t.Errorf("lines %q dropped %q", got.Lines, got.Dropped)
	}
}

// TestCarryUnwritable: values whose form PHP would read otherwise when
// written again, or that depend on the environment, are listed by key and
// place only (a value can be a licence key), never carried.
func TestCarryUnwritable(t *testing.T) {
	src := "a = foo \"x;y\"\nb = '2;/tmp'\nc = \"x\\\"y\"\nd = \"a\" \"b\"\ne = \"${HOME}/x\"\nf = \"/var/log/php.log\"\nEXTENSION = x.so\nnewrelic.license = \"s3cr3t\"\n"
	got := Carry(CarryInput{Live: []File{{"/x.ini", Parse([]byte(src))}}, Known: map[string]bool{"a": true, "b": true, "c": true, "d": true, "e": true, "f": true}, To: "8.4"})
	if !reflect.DeepEqual(got.Lines, []string{`f = "/var/log/php.log"`}) {
		t.Errorf("lines %q", got.Lines)
	}
	text := strings.Join(got.Dropped, "\n")
	for _, w := range []string{"a (/x.ini:1): its value has a quote", "b (/x.ini:2): its value has a quote", "c (/x.ini:3): its value is not one quoted string",
		"d (/x.ini:4): its value is not one quoted string", "e (/x.ini:5): its value names an environment variable", "newrelic.license (/x.ini:8): PHP 8.4 here has no such setting"} {
		if !strings.Contains(text, w) {
			t.Errorf("dropped lacks %q:\n%s", w, text)
		}
	}
	if strings.Contains(text, "s3cr3t") || strings.Contains(text, "EXTENSION") {
		t.Errorf("dropped says a value or an extension line:\n%s", text)
	}
}

func TestDeprecation(t *testing.T) {
	for _, tc := range []struct {
		key, value string
		deprecated bool
	}{
		{"assert.active", "0", true},
		{"session.sid_bits_per_character", "5", true},
		{"session.use_only_cookies", "0", true},
		{"session.use_only_cookies", "1", false},
		{"session.use_trans_sid", "On", true},
		{"session.use_trans_sid", "0", false},
		{"memory_limit", "1G", false},
	} {
		if got := Deprecation(tc.key, tc.value) != ""; got != tc.deprecated {
			t.Errorf("Deprecation(%s, %s) = %v, want %v", tc.key, tc.value, got, tc.deprecated)
		}
	}
}
