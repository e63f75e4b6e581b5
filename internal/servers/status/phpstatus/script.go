// Package phpstatus is the PHP status script phptune asks php-fpm to run:
// the lab's tuner (sizing opcache and the realpath cache) and advise
// --opcache on a live host both request it over FastCGI, straight from a
// pool, and Parse (this package's one reader of what it prints) takes the
// answer as untrusted input: it runs inside a process that also runs the
// app.
package phpstatus

// Script prints opcache_get_status(false), opcache's directives and the
// worker's realpath cache as one JSON object. It uses only functions of
// PHP's core and opcache, never the app's code, and drops first what an
// auto_prepend_file (the lab's profiling sampler, a host's own) left in an
// output buffer. "loaded" says whether opcache's API is there at all and
// "restrict_api" why it may refuse.
const Script = `<?php
// Written by phptune: the counters it sizes opcache and the realpath cache
// from. Not part of the app; requested only over php-fpm's own socket.
while (ob_get_level() > 0) { ob_end_clean(); }
header('Content-Type: application/json');
$out = [
    'php_version' => PHP_VERSION,
    'pid' => getmypid(),
    'loaded' => function_exists('opcache_get_status') && function_exists('opcache_get_configuration'),
    'restrict_api' => (string) ini_get('opcache.restrict_api'),
];
if ($out['loaded']) {
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
    $c = @opcache_get_configuration();
    if (is_array($c) && isset($c['directives'])) {
        $out['directives'] = array_intersect_key($c['directives'], array_flip([
            'opcache.enable', 'opcache.memory_consumption', 'opcache.interned_strings_buffer',
            'opcache.max_accelerated_files', 'opcache.max_wasted_percentage',
            'opcache.validate_timestamps', 'opcache.revalidate_freq',
            'opcache.jit', 'opcache.jit_buffer_size',
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
