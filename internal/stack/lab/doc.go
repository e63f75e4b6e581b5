// Package lab brings up and tears down private PHP stacks (a web server —
// nginx, Apache, lighttpd, Caddy or h2o, chosen by the server knob — with
// php-fpm or mod_php, MariaDB and an app) from the distro's packages, each
// in its own directory under Root, with every process recorded so nothing
// outlives `lab down`.
package lab
