package loopback

import (
	"net/url"
	"testing"
)

func TestIP(t *testing.T) {
	for host, want := range map[string]bool{
		"127.0.0.1": true, "127.1.2.3": true, "::1": true, "::ffff:127.0.0.1": true,
		"localhost": false, "0.0.0.0": false, "10.0.0.1": false, "[::1]": false, "::1%lo": false, "": false, "example.com": false,
	} {
		if got := IP(host); got != want {
			t.Errorf("IP(%q) = %v, want %v", host, got, want)
		}
	}
	for addr, want := range map[string]bool{"127.0.0.1:80": true, "[::1]:8080": true, "localhost:80": false, "127.0.0.1": false, "192.0.2.1:80": false} {
		if got := HostPort(addr); got != want {
			t.Errorf("HostPort(%q) = %v, want %v", addr, got, want)
		}
	}
}

func TestHTTPURL(t *testing.T) {
	for raw, ok := range map[string]bool{
		"http://127.0.0.1/":           true,
		"http://127.0.0.1:8080/index": true,
		"http://[::1]:80/":            true,
		"http://127.0.0.2/x?y=1":      true,
		"http://localhost/":           false,
		"https://127.0.0.1/":          false,
		"http://example.com/":         false,
		"http://127.0.0.1.evil.com/":  false,
		"http://user:pw@127.0.0.1/":   false,
		"http://evil.com#@127.0.0.1/": false,
		"127.0.0.1/":                  false,
		"http:127.0.0.1":              false,
		"":                            false,
	} {
		if _, err := HTTPURL(raw); (err == nil) != ok {
			t.Errorf("HTTPURL(%q): %v, want ok %v", raw, err, ok)
		}
	}
}

// FuzzHTTPURL: an accepted URL's host, as net/url and so net/http read
// it, is a loopback IP literal.
func FuzzHTTPURL(f *testing.F) {
	for _, s := range []string{"http://127.0.0.1/", "http://[::1]:80/", "http://localhost/", "http://a@127.0.0.1/", "http://127.0.0.1:80@evil/", "http://[::ffff:127.0.0.1]/"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		u, err := HTTPURL(raw)
		if err != nil {
			return
		}
		again, err := url.Parse(u.String())
		if err != nil || !IP(again.Hostname()) || again.Scheme != "http" {
			t.Fatalf("accepted %q (host %q)", raw, u.Hostname())
		}
	})
}
