package sockq

import (
	"encoding/binary"
	"fmt"
	"net/netip"
	"os"
	"strings"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"github.com/phptune/phptune/internal/base/netnsdial"
)

// Constants from linux/unix_diag.h and linux/inet_diag.h that x/sys does not
// export.
const (
	udiagShowName  = 0x01
	udiagShowRQLen = 0x10
	unixDiagName   = 0
	unixDiagRQLen  = 4

	nlmsgHdrLen    = 16
	unixDiagReqLen = 24
	unixDiagMsgLen = 16
	inetDiagReqLen = 56
	inetDiagMsgLen = 72
)

var seq atomic.Uint32

// captureHook, when set (by tests), receives every datagram read from the
// kernel so fixtures can be recorded.
var captureHook func(datagram []byte)

// Unix dumps the listening unix stream and seqpacket sockets with their
// queues through NETLINK_SOCK_DIAG.
func Unix() ([]Listener, error) { return unixIn(nil) }

// unixIn is Unix in the network namespace ns (this process's when nil):
// the kernel lists the unix sockets of the namespace the asking socket
// lives in, wherever their paths are.
func unixIn(ns *os.File) ([]Listener, error) {
	req := make([]byte, unixDiagReqLen)
	req[0] = unix.AF_UNIX
	binary.NativeEndian.PutUint32(req[4:], 1<<tcpListen)
	binary.NativeEndian.PutUint32(req[12:], udiagShowName|udiagShowRQLen)
	var out []Listener
	err := dump(ns, req, func(msg []byte) error {
		l, ok, err := parseUnixDiagMsg(msg)
		if err == nil && ok {
			out = append(out, l)
		}
		return err
	})
	return out, err
}

// TCP dumps the listening TCP sockets (IPv4 and IPv6) through inet_diag.
func TCP() ([]Listener, error) { return tcpIn(nil) }

// tcpIn is TCP in the network namespace ns (this process's when nil).
func tcpIn(ns *os.File) ([]Listener, error) {
	var out []Listener
	for _, fam := range []uint8{unix.AF_INET, unix.AF_INET6} {
		req := make([]byte, inetDiagReqLen)
		req[0] = fam
		req[1] = unix.IPPROTO_TCP
		binary.NativeEndian.PutUint32(req[4:], 1<<tcpListen)
		err := dump(ns, req, func(msg []byte) error {
			l, err := parseInetDiagMsg(msg)
			if err == nil && l.Address != "" {
				out = append(out, l)
			}
			return err
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// dump sends one SOCK_DIAG_BY_FAMILY dump request in the network
// namespace ns (this process's when nil) and hands each answer's payload
// to fn until NLMSG_DONE.
func dump(ns *os.File, req []byte, fn func([]byte) error) error {
	fd, err := diagSocket(ns)
	if err != nil {
		return fmt.Errorf("opening NETLINK_SOCK_DIAG: %w", err)
	}
	defer unix.Close(fd)
	s := seq.Add(1)
	msg := make([]byte, nlmsgHdrLen+len(req))
	binary.NativeEndian.PutUint32(msg[0:], uint32(len(msg)))
	binary.NativeEndian.PutUint16(msg[4:], unix.SOCK_DIAG_BY_FAMILY)
	binary.NativeEndian.PutUint16(msg[6:], unix.NLM_F_REQUEST|unix.NLM_F_DUMP)
	binary.NativeEndian.PutUint32(msg[8:], s)
	copy(msg[nlmsgHdrLen:], req)
	if err := unix.Sendto(fd, msg, 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return fmt.Errorf("sending sock_diag request: %w", err)
	}
	buf := make([]byte, 32<<10)
	for i := 0; i < 1<<16; i++ {
		n, _, err := unix.Recvfrom(fd, buf, 0)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return fmt.Errorf("reading sock_diag answer: %w", err)
		}
		if captureHook != nil {
			captureHook(append([]byte(nil), buf[:n]...))
		}
		done, err := ParseNetlink(buf[:n], s, fn)
		if err != nil || done {
			return err
		}
	}
	return fmt.Errorf("sock_diag dump did not end")
}

// diagSocket opens a NETLINK_SOCK_DIAG socket in the network namespace
// ns (this process's when nil): a socket answers for the namespace it was
// made in, so it is made there (netnsdial.Socket, on a thread of its own
// that enters the namespace and comes back, or ends).
func diagSocket(ns *os.File) (int, error) {
	const typ = unix.SOCK_DGRAM | unix.SOCK_CLOEXEC
	if ns == nil {
		return unix.Socket(unix.AF_NETLINK, typ, unix.NETLINK_SOCK_DIAG)
	}
	return netnsdial.Socket(ns, unix.AF_NETLINK, typ, unix.NETLINK_SOCK_DIAG)
}

// ParseNetlink walks the netlink messages in b (one datagram), calling fn
// with the payload of each SOCK_DIAG_BY_FAMILY answer that carries sequence
// number seq. It reports done at NLMSG_DONE and turns NLMSG_ERROR into an
// error.
func ParseNetlink(b []byte, seq uint32, fn func(payload []byte) error) (done bool, err error) {
	for len(b) > 0 {
		if len(b) < nlmsgHdrLen {
			return false, fmt.Errorf("%w: netlink: %d trailing bytes", ErrParse, len(b))
		}
		l := int(binary.NativeEndian.Uint32(b[0:]))
		typ := binary.NativeEndian.Uint16(b[4:])
		sq := binary.NativeEndian.Uint32(b[8:])
		if l < nlmsgHdrLen || l > len(b) {
			return false, fmt.Errorf("%w: netlink: message length %d of %d", ErrParse, l, len(b))
		}
		payload := b[nlmsgHdrLen:l]
		// Messages are padded to 4 bytes (NLMSG_ALIGN).
		next := (l + 3) &^ 3
		if next > len(b) {
			next = len(b)
		}
		b = b[next:]
		if sq != seq {
			continue
		}
		switch typ {
		case unix.NLMSG_DONE:
			return true, nil
		case unix.NLMSG_ERROR:
			if len(payload) >= 4 {
				if e := int32(binary.NativeEndian.Uint32(payload)); e < 0 {
					return false, fmt.Errorf("sock_diag: %w (is the unix_diag/inet_diag kernel module available?)", unix.Errno(-e))
				}
			}
			return true, nil
		case unix.SOCK_DIAG_BY_FAMILY:
			if err := fn(payload); err != nil {
				return false, err
			}
		}
	}
	return false, nil
}

// parseUnixDiagMsg decodes a unix_diag_msg and its attributes. ok is false
// for sockets that are not listeners.
func parseUnixDiagMsg(b []byte) (Listener, bool, error) {
	if len(b) < unixDiagMsgLen {
		return Listener{}, false, fmt.Errorf("%w: unix_diag_msg of %d bytes", ErrParse, len(b))
	}
	state := b[2]
	l := Listener{Network: "unix", Backlog: -1, Inode: uint64(binary.NativeEndian.Uint32(b[4:]))}
	haveQ := false
	err := attrs(b[unixDiagMsgLen:], func(typ uint16, v []byte) error {
		switch typ {
		case unixDiagName:
			l.Address = unixName(v)
		case unixDiagRQLen:
			if len(v) < 8 {
				return fmt.Errorf("%w: UNIX_DIAG_RQLEN of %d bytes", ErrParse, len(v))
			}
			// For a listener: rqueue is the number of connections
			// waiting, wqueue the backlog.
			l.Queued = int64(binary.NativeEndian.Uint32(v))
			l.Backlog = int64(binary.NativeEndian.Uint32(v[4:]))
			haveQ = true
		}
		return nil
	})
	if err != nil {
		return Listener{}, false, err
	}
	if !haveQ {
		l.Queued = -1
	}
	return l, state == tcpListen, nil
}

// unixName turns a sun_path into a printable name: abstract names (leading
// NUL) get the "@" prefix that ss and /proc/net/unix use.
func unixName(v []byte) string {
	if len(v) > 0 && v[0] == 0 {
		return "@" + strings.TrimRight(string(v[1:]), "\x00")
	}
	return strings.TrimRight(string(v), "\x00")
}

// attrs walks rtattr-style attributes: 2 bytes length (header included),
// 2 bytes type, value, padding to 4 bytes.
func attrs(b []byte, fn func(typ uint16, v []byte) error) error {
	for len(b) >= 4 {
		l := int(binary.NativeEndian.Uint16(b[0:]))
		typ := binary.NativeEndian.Uint16(b[2:])
		if l < 4 || l > len(b) {
			return fmt.Errorf("%w: attribute length %d of %d", ErrParse, l, len(b))
		}
		if err := fn(typ, b[4:l]); err != nil {
			return err
		}
		next := (l + 3) &^ 3
		if next > len(b) {
			next = len(b)
		}
		b = b[next:]
	}
	return nil
}

// parseInetDiagMsg decodes an inet_diag_msg. Ports and addresses are in
// network byte order; rqueue/wqueue of a listener are the accept queue and
// the backlog.
func parseInetDiagMsg(b []byte) (Listener, error) {
	if len(b) < inetDiagMsgLen {
		return Listener{}, fmt.Errorf("%w: inet_diag_msg of %d bytes", ErrParse, len(b))
	}
	fam, state := b[0], b[1]
	if state != tcpListen {
		return Listener{}, nil
	}
	port := binary.BigEndian.Uint16(b[4:])
	var ip netip.Addr
	switch fam {
	case unix.AF_INET:
		ip = netip.AddrFrom4([4]byte(b[8:12]))
	case unix.AF_INET6:
		ip = netip.AddrFrom16([16]byte(b[8:24])).Unmap()
	default:
		return Listener{}, fmt.Errorf("%w: inet_diag family %d", ErrParse, fam)
	}
	return Listener{
		Network: "tcp",
		Address: netip.AddrPortFrom(ip, port).String(),
		Queued:  int64(binary.NativeEndian.Uint32(b[56:])),
		Backlog: int64(binary.NativeEndian.Uint32(b[60:])),
		Inode:   uint64(binary.NativeEndian.Uint32(b[68:])),
	}, nil
}

// Reader finds the queues of given addresses, through netlink when it works
// and /proc/net/tcp otherwise (unix sockets then have no figures).
type Reader struct {
	// ProcRoot is where the /proc/net fallback reads ("/proc" when empty).
	ProcRoot string
	// NetNS, when set, is the network namespace to read (an open nsfs
	// file, such as a sealed lab's): through netlink only, as the
	// fallback's /proc/net shows this process's namespace.
	NetNS     *os.File
	noNetlink bool
}

// Listeners returns the listening sockets of the networks wanted ("unix",
// "tcp").
func (r *Reader) Listeners(wantUnix, wantTCP bool) ([]Listener, error) {
	var out []Listener
	var errs []string
	if wantUnix {
		ls, err := unixIn(r.NetNS)
		if err != nil {
			errs = append(errs, "unix socket queues: "+err.Error())
		}
		out = append(out, ls...)
	}
	if wantTCP {
		var ls []Listener
		var err error
		if !r.noNetlink {
			ls, err = tcpIn(r.NetNS)
		}
		if (r.noNetlink || err != nil) && r.NetNS == nil {
			r.noNetlink = true
			root := r.ProcRoot
			if root == "" {
				root = "/proc"
			}
			ls, err = ReadNetTCP(root)
		}
		if err != nil {
			errs = append(errs, "tcp queues: "+err.Error())
		}
		out = append(out, ls...)
	}
	if len(errs) > 0 {
		return out, fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return out, nil
}
