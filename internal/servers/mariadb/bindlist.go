package mariadb

import (
	"net/netip"
	"strings"
)

// bindList is bind-address's value: host, then each of also that is an
// IP address and not already there, comma-separated (MariaDB 10.11
// reads a list). Anything else is left out: only an address reaches
// my.cnf, never text that could end the line.
func bindList(host string, also []string) string {
	list := []string{host}
	for _, a := range also {
		ip, err := netip.ParseAddr(a)
		if err != nil || ip.Zone() != "" || ip.IsUnspecified() {
			continue
		}
		s := ip.Unmap().String()
		if !containsString(list, s) {
			list = append(list, s)
		}
	}
	return strings.Join(list, ",")
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
