// Package phplint checks whether a site's PHP files still compile on a
// newer PHP (a PHP root's, `phptune php lint 8.4 DIR`): every *.php file
// under a directory is given to the newer PHP's `php -l`, a batch at a time,
// as an unprivileged account with a timeout, and each file it refuses is
// given to the PHP the site runs now, to tell a file that fails only on the
// newer PHP from one that is already broken. php -l only compiles: it runs
// none of the site's code, so an error PHP raises only when the code runs
// (a class name the newer PHP now declares, a call to a removed function)
// is not found here but in a lab's measured runs (PHP's log, classified by
// package errlog).
package phplint
