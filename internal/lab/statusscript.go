package lab

import "path/filepath"

// The runtime status script: a PHP file phptune writes (root-owned, in the
// root-owned status/ directory the pool can read but not write, outside
// the docroot so nginx never serves it) and requests over FastCGI straight
// from php-fpm. It prints the counters the tuner sizes the caches from:
// opcache_get_status() (memory, interned strings, cached scripts, restarts,
// the JIT buffer), opcache's directives, and the worker's realpath cache.
// What it prints comes from a process that runs the lab's app, so readers
// treat it as untrusted input (bounded size, numbers checked).

// statusDir is the root-owned directory of the status script.
const statusDir = "status"

// statusScriptName is the script's file name in statusDir.
const statusScriptName = "phptune-status.php"

// statusScript is the script's text. It uses only functions of PHP's core
// and opcache, never the app's code, and prints one JSON object.
const statusScript = `<?php
// Written by phptune: the counters its tuner sizes opcache and the
// realpath cache from. Not part of the app; served only over php-fpm's
// private socket.
header('Content-Type: application/json');
$out = ['php_version' => PHP_VERSION, 'pid' => getmypid()];
if (function_exists('opcache_get_status')) {
    $s = @opcache_get_status(false);
    if (is_array($s)) {
        $out['opcache'] = [
            'enabled' => $s['opcache_enabled'] ?? false,
            'cache_full' => $s['cache_full'] ?? false,
            'restart_pending' => $s['restart_pending'] ?? false,
            'memory_usage' => $s['memory_usage'] ?? null,
            'interned_strings_usage' => $s['interned_strings_usage'] ?? null,
            'statistics' => $s['opcache_statistics'] ?? null,
            'jit' => isset($s['jit']) ? array_intersect_key($s['jit'], array_flip(['enabled', 'on', 'buffer_size', 'buffer_free'])) : null,
        ];
    }
}
if (function_exists('opcache_get_configuration')) {
    $c = @opcache_get_configuration();
    if (is_array($c) && isset($c['directives'])) {
        $out['directives'] = array_intersect_key($c['directives'], array_flip([
            'opcache.memory_consumption', 'opcache.interned_strings_buffer',
            'opcache.max_accelerated_files', 'opcache.max_wasted_percentage',
            'opcache.jit_buffer_size', 'opcache.validate_timestamps',
        ]));
    }
}
$out['realpath_cache'] = [
    'used_bytes' => realpath_cache_size(),
    'entries' => count(realpath_cache_get()),
    'size_ini' => ini_get('realpath_cache_size'),
    'ttl_ini' => ini_get('realpath_cache_ttl'),
];
echo json_encode($out);
`

// writeStatusScript writes the status script into the root-owned status/
// directory, readable by the lab's account.
func (l *Lab) writeStatusScript(acct *account) error {
	y := layout{l.Dir}
	if err := mkdirOwned(y.p(statusDir), -1, acct.group(), acct.readDirMode()); err != nil {
		return err
	}
	return writeOwned(y.p(statusDir, statusScriptName), []byte(statusScript), acct.readFileMode(), acct.group())
}

// StatusScript is the path of the lab's runtime status script, for a
// FastCGI request's SCRIPT_FILENAME (see the tuner's runtime reader).
func (l *Lab) StatusScript() string {
	return filepath.Join(l.Dir, statusDir, statusScriptName)
}
