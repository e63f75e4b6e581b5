package phpbuild

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"strings"
)

// BOLT (LLVM's binary layout optimiser, Debian's bolt-16) rewrites the
// linked php-fpm from a profile of it serving the training workload:
// basic blocks ordered by how often they run, hot functions together, cold
// code split away. These VMs have no hardware counters (perf cannot sample
// branches), so the profile comes from instrumentation: llvm-bolt
// -instrument writes a php-fpm that counts every branch and dumps the
// counts when a process exits (one file per process: php-fpm forks its
// workers), the training serves the workload with it exactly as a PGO
// training does (as the lab account, into a directory of that account),
// merge-fdata adds the files up and llvm-bolt -data rewrites the binary.
// Every step runs as the build account; root never runs a BOLT output.
// BOLT reorders functions only in a binary linked with its relocations
// kept (--emit-relocs, added to LDFLAGS and so to the build's key).
const (
	boltPackage   = "bolt-16"
	boltBin       = "llvm-bolt-16"
	mergeFdataBin = "merge-fdata-16"
	boltLinkFlag  = "-Wl,--emit-relocs"
	// boltCompileFlag keeps each function in one piece (gcc splits cold
	// blocks into foo.cold at -O2), which BOLT's relocation mode needs.
	boltCompileFlag = "-fno-reorder-blocks-and-partition"
	boltProfile     = "php-fpm.fdata"
	// boltRuntime is the instrumentation runtime, a path llvm-bolt-16
	// reads below /usr/lib (Debian's package keeps it in llvm-16/lib,
	// where llvm-bolt's default, /usr/lib/libbolt_rt_instr.a, is not).
	boltRuntime = "llvm-16/lib/libbolt_rt_instr.a"
)

// BOLTOptimizeArgs are llvm-bolt's arguments rewriting fpm into out with
// the merged profile data.
func BOLTOptimizeArgs(fpm, data, out string) []string {
	return []string{fpm, "-o", out, "-data=" + data,
		"-reorder-blocks=ext-tsp", "-reorder-functions=hfsort+",
		"-split-functions", "-split-all-cold", "-dyno-stats"}
}

// boltFdataRE is a profile file the instrumented php-fpm writes (the pid
// appended); anything else in the lab account's directory is ignored.
var boltFdataRE = regexp.MustCompile(`^` + regexp.QuoteMeta(boltProfile) + `\.\d{1,10}\.fdata$|^` + regexp.QuoteMeta(boltProfile) + `\.\d{1,10}$`)

// bolt instruments the compiled php-fpm, trains it, and replaces it with
// the binary BOLT optimised from the profile.
func (b *builder) bolt(ctx context.Context) error {
	fpm := filepath.Join(b.src, "sapi", "fpm", "php-fpm")
	inst := fpm + ".bolt-instrumented"
	prof := filepath.Join(b.work, "bolt-prof")
	if err := b.mkProfDir(prof); err != nil {
		return err
	}
	if err := b.timed("bolt-instrument", func(log io.Writer) error {
		// The link must have kept php-fpm's relocations; BOLT's own
		// message for a binary without them does not say what to change.
		sections, err := b.output(ctx, b.src, nil, "readelf", "-S", "--wide", fpm)
		if err != nil {
			return fmt.Errorf("readelf -S php-fpm: %v", err)
		}
		if !HasStaticRelocs(sections) {
			return fmt.Errorf("php-fpm was linked without its relocations (no .rela.text section): the link line did not get %s", boltLinkFlag)
		}
		return b.as(b.src, log).run(ctx, boltBin, fpm, "-instrument", "-o", inst,
			"--instrumentation-file="+filepath.Join(prof, boltProfile), "--instrumentation-file-append-pid",
			"--runtime-instrumentation-lib="+boltRuntime)
	}); err != nil {
		return fmt.Errorf("BOLT could not instrument php-fpm (%w); see the bolt-instrument log", err)
	}
	// The rewritten binary must start before a lab serves with it:
	// `php-fpm -n -v` as the build account (root never runs it).
	if out, err := b.output(ctx, b.src, []string{"PHP_INI_SCAN_DIR="}, inst, "-n", "-v"); err != nil {
		return fmt.Errorf("the BOLT-instrumented php-fpm does not start (php-fpm -n -v: %v%s): %s", err, firstLineOf(out), boltCrashNote)
	}
	if err := b.timed("bolt-train", func(log io.Writer) error {
		b.trainFPM, b.trainProfiles = inst, boltProfile+".*"
		defer func() { b.trainFPM, b.trainProfiles = "", "" }()
		info, err := b.train(ctx, prof, log)
		b.rec.BOLTTrainInfo = info
		return err
	}); err != nil {
		return err
	}
	return b.timed("bolt-optimize", func(log io.Writer) error {
		// The profile files, listed as the build account (root does not
		// read the lab account's directory).
		list, err := b.output(ctx, prof, nil, "find", ".", "-maxdepth", "1", "-type", "f", "-name", boltProfile+".*", "-printf", "%f\n")
		if err != nil {
			return fmt.Errorf("listing the BOLT profiles: %v", err)
		}
		var files []string
		for _, name := range strings.Split(list, "\n") {
			if boltFdataRE.MatchString(name) {
				files = append(files, filepath.Join(prof, name))
			}
		}
		if len(files) == 0 {
			return fmt.Errorf("the instrumented php-fpm wrote no BOLT profile into %s", prof)
		}
		merged := filepath.Join(b.src, "sapi", "fpm", "php-fpm-bolt.fdata")
		if err := b.as(b.src, log).run(ctx, mergeFdataBin, append([]string{"-q", "-o", merged}, files...)...); err != nil {
			return fmt.Errorf("merge-fdata: %v", err)
		}
		out := fpm + ".bolt"
		res, err := b.output(ctx, b.src, nil, boltBin, BOLTOptimizeArgs(fpm, merged, out)...)
		fmt.Fprint(log, res)
		if err != nil {
			return fmt.Errorf("llvm-bolt could not optimise php-fpm with the profile: %v: %s", err, lastLines(res, 5))
		}
		b.rec.BOLTStats = BOLTSummary(res)
		fmt.Fprintf(log, "BOLT: %d profiles merged; %s\n", len(files), b.rec.BOLTStats)
		return b.as(b.src, log).run(ctx, "mv", "-f", out, fpm)
	})
}

// BOLTSummary picks from llvm-bolt's output the lines that say how much
// of the binary the profile covered and what changed, joined with "; ".
func BOLTSummary(out string) string {
	var keep []string
	for _, line := range strings.Split(out, "\n") {
		line = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(line), "BOLT-INFO:"))
		switch {
		case strings.Contains(line, "functions") && strings.Contains(line, "profile"),
			strings.Contains(line, "taken branches") && strings.Contains(line, "%"),
			strings.Contains(line, "executed instructions") && strings.Contains(line, "%"):
			if len(keep) < 8 {
				keep = append(keep, line)
			}
		}
	}
	return strings.Join(keep, "; ")
}

// boltCrashNote says what a crashing BOLT output means here.
const boltCrashNote = "BOLT rewrote a binary that does not run; with Debian's bolt-16 every rewrite of PHP 8.2's php-fpm (PIE, relocations kept) tried here crashed in main's first call, instrumented or not (docs/build.md, BOLT); the plain, pgo and pgo-lto variants are unaffected"

func firstLineOf(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	if s == "" {
		return ""
	}
	return "; " + s
}

// HasStaticRelocs reports whether readelf -S output lists the relocation
// section of .text that a link with --emit-relocs keeps.
func HasStaticRelocs(readelfSections string) bool {
	for _, f := range strings.Fields(readelfSections) {
		if f == ".rela.text" {
			return true
		}
	}
	return false
}
