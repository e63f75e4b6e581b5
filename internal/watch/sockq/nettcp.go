package sockq

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
)

// tcpListen is TCP_LISTEN in the kernel's state numbering (include/net/tcp_states.h).
const tcpListen = 10

// ReadNetTCP reads the TCP listeners from procRoot/net/tcp and tcp6 (the
// fallback source: Backlog is -1). A missing tcp6 (IPv6 disabled) is not an
// error.
func ReadNetTCP(procRoot string) ([]Listener, error) {
	var out []Listener
	for _, name := range []string{"tcp", "tcp6"} {
		b, err := os.ReadFile(filepath.Join(procRoot, "net", name))
		if err != nil {
			if name == "tcp6" && os.IsNotExist(err) {
				continue
			}
			return nil, err
		}
		ls, err := ParseNetTCP(b)
		if err != nil {
			return nil, fmt.Errorf("%s/net/%s: %w", procRoot, name, err)
		}
		out = append(out, ls...)
	}
	return out, nil
}

// ParseNetTCP returns the LISTEN sockets of a /proc/net/tcp or tcp6 table.
// Addresses are hex in the kernel's memory order: each 32-bit word of the IP
// is printed as a host-endian integer (little-endian here), the port as a
// plain number.
func ParseNetTCP(b []byte) ([]Listener, error) {
	var out []Listener
	first := true
	for len(b) > 0 {
		var line []byte
		line, b, _ = bytes.Cut(b, []byte("\n"))
		if first {
			first = false
			if bytes.Contains(line, []byte("local_address")) {
				continue
			}
		}
		f := bytes.Fields(line)
		if len(f) == 0 {
			continue
		}
		if len(f) < 10 {
			return nil, fmt.Errorf("%w: short line %.100q", ErrParse, line)
		}
		st, err := strconv.ParseUint(string(f[3]), 16, 8)
		if err != nil {
			return nil, fmt.Errorf("%w: state in %.100q", ErrParse, line)
		}
		if st != tcpListen {
			continue
		}
		ap, err := parseHexAddrPort(f[1])
		if err != nil {
			return nil, fmt.Errorf("%w: %v in %.100q", ErrParse, err, line)
		}
		_, rx, ok := bytes.Cut(f[4], []byte(":"))
		if !ok {
			return nil, fmt.Errorf("%w: queues in %.100q", ErrParse, line)
		}
		q, err := strconv.ParseUint(string(rx), 16, 32)
		if err != nil {
			return nil, fmt.Errorf("%w: rx_queue in %.100q", ErrParse, line)
		}
		ino, err := strconv.ParseUint(string(f[9]), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%w: inode in %.100q", ErrParse, line)
		}
		out = append(out, Listener{Network: "tcp", Address: ap.String(), Queued: int64(q), Backlog: -1, Inode: ino})
	}
	return out, nil
}

func parseHexAddrPort(b []byte) (netip.AddrPort, error) {
	h, p, ok := bytes.Cut(b, []byte(":"))
	if !ok {
		return netip.AddrPort{}, fmt.Errorf("no port")
	}
	port, err := strconv.ParseUint(string(p), 16, 16)
	if err != nil {
		return netip.AddrPort{}, fmt.Errorf("bad port %q", p)
	}
	if len(h) != 8 && len(h) != 32 {
		return netip.AddrPort{}, fmt.Errorf("bad address %q", h)
	}
	raw := make([]byte, len(h)/2)
	for i := 0; i < len(h); i += 8 {
		w, err := strconv.ParseUint(string(h[i:i+8]), 16, 32)
		if err != nil {
			return netip.AddrPort{}, fmt.Errorf("bad address %q", h)
		}
		binary.NativeEndian.PutUint32(raw[i/2:], uint32(w))
	}
	ip, _ := netip.AddrFromSlice(raw)
	return netip.AddrPortFrom(ip.Unmap(), uint16(port)), nil
}
