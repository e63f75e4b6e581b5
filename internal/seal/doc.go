// Package seal builds the sealed place a site lab's processes run in: a
// persistent network namespace with loopback only and a persistent mount
// namespace with private propagation, both bound to files in a directory of
// the lab so that they outlive the phptune process that made them.
//
// Inside the mount namespace /run and /tmp are fresh tmpfs (the host's
// sockets under /run/php, /run/mysqld and /tmp are out of reach), the paths
// the caller names are bind-mounted over them (the lab's MariaDB socket
// directory at /run/mysqld), /etc/hosts is a private file where the site's
// names resolve to the loopback address, and the site's docroot is an
// overlay mounted at its real path: the real directory is the read-only
// lower layer, writes land in an upper layer kept in the lab.
//
// Inside the network namespace nftables counts, per destination, every new
// connection that goes anywhere but the lab's own listeners, and resets the
// ones that would leave loopback: they fail at once with "connection
// refused" and Attempts reports them.
//
// Processes are started inside with util-linux's nsenter and setpriv
// (Command): Go cannot enter a mount namespace from its multi-threaded
// process. Destroy kills every process left in either namespace, unmounts
// the namespace files and removes what Create made. docs/sealing.md
// describes the mechanism and its status.
package seal
