// Package phproot makes, lists and removes PHP roots: a Debian 13 (trixie)
// file tree holding that release's own php8.4-fpm and extensions, made by
// mmdebstrap from the configured Debian archive into phptune's home, so a
// newer PHP can be measured beside the installed one (`phptune php add`).
//
// A root is complete or absent. It is made in a work directory beside its
// place, checked (php-fpm8.4 -v prints 8.4, php8.4 -m lists every wanted
// extension), recorded (manifest.json: the packages and versions dpkg
// lists inside it, the time it took, its size) and only then renamed into
// place; a half-made root is removed, never used. Everything is refused
// before anything is made when it cannot work: an unknown release, no
// mmdebstrap, a keyring without the release's key, no route to the
// archive, too little disk, or an extension the release has no package
// for (the refusal names --skip-ext).
//
// Find gives a caller the root of a release: its directory, php-fpm's path
// inside it, its php.ini and conf.d directories, and the manifest.
package phproot
