// Package seal builds the sealed place a site lab's processes run in:
// persistent network, mount and IPC namespaces with loopback only and
// private propagation, bound to files in a directory of the lab so that
// they outlive the phptune process that made them, and a pid namespace
// held by the seal's init.
//
// The mount namespace's file system is built from an allowlist (root.go):
// a fresh tmpfs root holding read-only binds of /usr (and the /bin, /lib*,
// /sbin links), a generated /etc (the lab's account, hosts where the
// site's names are the loopback address, a resolver that answers nothing,
// and the host's configuration the lab's programs read), a minimal /dev,
// fresh /run and /tmp, the /proc of the seal's pid namespace, the paths
// the caller binds (the lab's directory, its MariaDB socket directory at
// /run/mysqld) and the site's docroot — or its app's root, the directory
// above it that holds its code and configuration (Spec.AppRoot, never a
// system directory: approot.go) — as an overlay at its real path: the
// real directory is the read-only lower layer, writes land in an upper
// layer kept in the lab. Nothing else of the host exists inside.
//
// The seal's init (init.go) is this package's binary as pid 1 of a new pid
// namespace: it builds that root, pivots into it and stays, so that the
// lab's processes, which Start forks into its namespace (pidns.go), see
// and can name no process of the host.
//
// Inside the network namespace nftables counts, per destination, every new
// connection that goes anywhere but the lab's own listeners, and resets the
// ones that would leave loopback: they fail at once with "connection
// refused" and Attempts reports them.
//
// Each process is confined before it runs (confine.go): Landlock, and a
// seccomp filter (seccomp.go) that leaves socket(2) and socketpair(2) only
// AF_UNIX, AF_INET, AF_INET6 and AF_NETLINK (AF_VSOCK, which no namespace
// holds, and the rest fail with EAFNOSUPPORT), refuses io_uring (whose
// socket operation would get around it) and kills another ABI's calls.
//
// Processes are made with util-linux's nsenter and setpriv (Command) and
// started with Start: Go cannot enter a mount namespace from its
// multi-threaded process. Destroy kills every process left in the seal's
// namespaces, unmounts the namespace files and removes what Create made.
// docs/sealing.md describes the mechanism and its status.
package seal
