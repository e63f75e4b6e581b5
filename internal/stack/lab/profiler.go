package lab

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// The PHP-level sampler of phptune profile: a script the lab's php-fpm
// prepends to every request (auto_prepend_file, set in php/98-profiler.ini
// only while a profile runs) that starts an excimer profiler and, at the
// end of the request, appends the request's PHP stacks in collapsed form
// ("frame;frame;... COUNT") to profile/php.folded. The script is
// root-owned in the root-owned status/ directory; the output directory is
// the lab account's, so root reads the file as hostile input
// (ReadPHPProfile).

// PHP profiler clocks: what excimer's timer counts.
const (
	ProfilerCPU  = "cpu"  // the worker's CPU time (EXCIMER_CPU)
	ProfilerWall = "wall" // wall time: waiting on the database counts too (EXCIMER_REAL)
	// ProfilerPerfMap is no PHP sampler: PHP's JIT writes the perf map
	// that names its code (/tmp/perf-PID.map, opcache.jit_debug=0x10)
	// while perf samples.
	ProfilerPerfMap = "perfmap"
)

// MaxPerfMap bounds what is read of one worker's perf map.
const MaxPerfMap = 16 << 20

const (
	profilerScriptName = "phptune-profiler.php"
	profileDir         = "profile" // the lab account's: the sampler writes here
	phpProfileName     = "php.folded"
	// MaxPHPProfile bounds what is read of the sampler's file.
	MaxPHPProfile = 64 << 20
)

// profilerScript writes each request's samples. Frames are named as
// excimer names them (Class::method, function, {closure}, the file for a
// file's top-level code, relative to the document root), with a
// WordPress plugin's or theme's name marked " [plugins/NAME]". It uses
// PHP's core only, never the app's code, and does nothing when excimer is
// not loaded (it writes one line saying so).
const profilerScript = `<?php
// Written by phptune profile: samples this request's PHP stacks with the
// excimer extension. Not part of the app; present only while a profile runs.
if (!class_exists('ExcimerProfiler', false)) {
    @file_put_contents(%[1]s, "#excimer-missing 1\n", FILE_APPEND | LOCK_EX);
    return;
}
$GLOBALS['__phptune_profiler'] = new ExcimerProfiler();
$GLOBALS['__phptune_profiler']->setEventType(%[2]s);
$GLOBALS['__phptune_profiler']->setPeriod(%[3]s);
$GLOBALS['__phptune_profiler']->start();
register_shutdown_function(static function () {
    $p = $GLOBALS['__phptune_profiler'] ?? null;
    if (!$p instanceof ExcimerProfiler) {
        return;
    }
    $p->stop();
    $root = rtrim((string)($_SERVER['DOCUMENT_ROOT'] ?? ''), '/') . '/';
    $counts = [];
    foreach ($p->getLog() as $entry) {
        $names = [];
        foreach (array_reverse($entry->getTrace()) as $f) {
            $file = (string)($f['file'] ?? '');
            if (isset($f['closure_line'])) {
                $name = '{closure}';
            } elseif (isset($f['function'])) {
                $name = isset($f['class']) ? $f['class'] . '::' . $f['function'] : $f['function'];
            } else {
                $name = strncmp($file, $root, strlen($root)) === 0 ? substr($file, strlen($root)) : basename($file);
            }
            if ($file !== '' && preg_match('~/wp-content/((?:mu-)?plugins|themes)/([^/]+)/~', $file, $m)) {
                $name .= ' [' . $m[1] . '/' . $m[2] . ']';
            }
            $names[] = strtr($name, ";\n\r", '___');
        }
        $key = implode(';', $names);
        $counts[$key] = ($counts[$key] ?? 0) + $entry->getEventCount();
    }
    $out = '';
    foreach ($counts as $k => $n) {
        $out .= ($k === '' ? '[no frame]' : $k) . ' ' . $n . "\n";
    }
    if ($out !== '') {
        @file_put_contents(%[1]s, $out, FILE_APPEND | LOCK_EX);
    }
});
`

// profilerIni is php/98-profiler.ini: the prepend while a profile runs,
// a comment otherwise.
func (l *Lab) profilerIni() string {
	switch l.PHPProfiler {
	case "":
		return "; phptune profile's PHP sampler is off.\n"
	case ProfilerPerfMap:
		return "; phptune profile: PHP's JIT names its code in /tmp/perf-PID.map while perf samples.\nopcache.jit_debug = 16\n"
	}
	return fmt.Sprintf("; phptune profile's PHP sampler (clock %s), on while a profile runs.\nauto_prepend_file = %s\n",
		l.PHPProfiler, filepath.Join(l.Dir, statusDir, profilerScriptName))
}

// writeProfiler writes the sampler script (root-owned, readable by the
// stack) and makes the lab account's output directory.
func (l *Lab) writeProfiler(acct *account) error {
	y := layout{l.Dir}
	uid, gid := acct.ids()
	if err := mkdirOwned(y.p(profileDir), uid, gid, 0o700); err != nil {
		return err
	}
	event, period := "EXCIMER_CPU", "0.01"
	if l.PHPProfiler == ProfilerWall {
		event = "EXCIMER_REAL"
	}
	out := phpString(y.p(profileDir, phpProfileName))
	script := fmt.Sprintf(profilerScript, out, event, period)
	return writeOwned(y.p(statusDir, profilerScriptName), []byte(script), acct.readFileMode(), acct.group())
}

// SetPHPProfiler turns the PHP sampler on (clock ProfilerCPU or
// ProfilerWall) or off (""): php-fpm restarts with the prepend in, or out.
// The configuration is the lab's own; only the sampler changes.
func (l *Lab) SetPHPProfiler(ctx context.Context, clock string) error {
	switch clock {
	case "", ProfilerCPU, ProfilerWall, ProfilerPerfMap:
	default:
		return fmt.Errorf("PHP profiler clock %q: use %s or %s", clock, ProfilerCPU, ProfilerWall)
	}
	return l.apply(ctx, l.Config, clock, true)
}

// ClearPHPProfile removes the sampler's output, so the next read holds
// what was sampled since. Unlinking a name never follows a link.
func (l *Lab) ClearPHPProfile() error {
	err := os.Remove(layout{l.Dir}.p(profileDir, phpProfileName))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	return err
}

// ReadPHPProfile opens the sampler's output as the lab account's file
// (no link followed, a regular file the account owns, one link) and
// returns at most MaxPHPProfile bytes of it; truncated says there was
// more. No file is an empty profile.
func (l *Lab) ReadPHPProfile() (data []byte, truncated bool, err error) {
	f, err := openLabFile(layout{l.Dir}.p(profileDir), phpProfileName, l.UID)
	if errors.Is(err, os.ErrNotExist) || errors.Is(err, syscall.ENOENT) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, MaxPHPProfile+1))
	if err != nil {
		return nil, false, err
	}
	if len(b) > MaxPHPProfile {
		b = b[:MaxPHPProfile]
		if i := strings.LastIndexByte(string(b), '\n'); i >= 0 {
			b = b[:i+1]
		}
		return b, true, nil
	}
	return b, false, nil
}

// ReadPerfMap reads the perf map one of the lab's PHP processes wrote
// (/tmp/perf-PID.map with ProfilerPerfMap): the lab account's file in a
// directory everyone writes, so it is opened without following a link,
// must be a regular file of the lab's account with one link, and at most
// MaxPerfMap bytes are read. No file is no map (the JIT compiled nothing
// in that process).
func (l *Lab) ReadPerfMap(pid int) ([]byte, error) {
	f, err := openLabFile("/tmp", fmt.Sprintf("perf-%d.map", pid), l.UID)
	if errors.Is(err, os.ErrNotExist) || errors.Is(err, syscall.ENOENT) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, MaxPerfMap))
}
