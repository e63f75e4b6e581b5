package load

import "fmt"

// CheckHost reports whether h can be sent as a Host header (--host): a
// host name or address with an optional :port, in the characters a URL's
// host may hold without escaping. Anything else (spaces, CR or LF, a
// path) is refused so that it cannot add a header or a request line.
func CheckHost(h string) error {
	if h == "" {
		return fmt.Errorf("the host is empty; give the site's name, e.g. --host site.test")
	}
	if len(h) > 255 {
		return fmt.Errorf("host %.40q... is %d bytes, longer than a host name may be (255)", h, len(h))
	}
	for i := 0; i < len(h); i++ {
		c := h[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '-' || c == '_' || c == ':' || c == '[' || c == ']') {
			return fmt.Errorf("host %q has %q, which is not part of a host name or host:port; give the name as the site's vhost has it, e.g. --host site.test", h, c)
		}
	}
	return nil
}
