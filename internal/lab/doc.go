// Package lab brings up and tears down private PHP stacks (nginx + php-fpm +
// MariaDB + an app) from the distro's packages, each in its own directory
// under Root, with every process recorded so nothing outlives `lab down`.
package lab
