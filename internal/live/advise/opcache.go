package advise

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/phptune/phptune/internal/decide/sizing"
	"github.com/phptune/phptune/internal/model/knob"
	"github.com/phptune/phptune/internal/model/results"
)

// OpcacheAdvice is one master's opcache (shared by its pools) as read
// through one of them, with the knob values advise recommends for it.
type OpcacheAdvice struct {
	Master string   `json:"master"`
	Pools  []string `json:"pools"`
	// Through is the pool whose worker answered the status script.
	Through string `json:"read_through,omitempty"`
	// Error says why it could not be read (refused, or the script
	// failed); Reading is nil then.
	Error   string   `json:"error,omitempty"`
	Reading *Opcache `json:"reading,omitempty"`
	// HitRate is hits ÷ (hits + misses) since opcache started; -1 when
	// not read.
	HitRate float64 `json:"hit_rate"`
	// Knobs are the recommended assignments (KNOB=VALUE, the knob model's
	// names), for a knob file phptune apply writes into 99-phptune.ini.
	Knobs []string `json:"recommended_knobs,omitempty"`
}

// Thresholds of the opcache findings.
const (
	// OpcacheFull is the free share below which a cache counts as full.
	OpcacheFull = 0.05
	// MinOpcacheHitRate is the hit rate below which the misses are a
	// warning, once opcache has seen MinLookups lookups.
	MinOpcacheHitRate = 0.95
	MinLookups        = 1000
)

// AdviseOpcache turns one master's opcache reading into findings and
// knob values. measured are a stored tune's decisions (nil: none), whose
// verdicts on the JIT and on opcache.validate_timestamps=off are quoted:
// advise sends no load and cannot measure either.
//
// Sizes are raised, never lowered (untouched shared memory is never
// resident): a cache with less than OpcacheFull free, or that restarted
// for lack of room, is raised to sizing.Headroom × what it holds.
func AdviseOpcache(master string, pools []string, through string, o *Opcache, readErr string, measured []results.Decision) (OpcacheAdvice, []Finding) {
	oa := OpcacheAdvice{Master: master, Pools: pools, Through: through, Reading: o, Error: readErr, HitRate: -1}
	f := &opcacheFindings{where: "opcache (pools " + strings.Join(pools, ", ") + "): ", rec: map[string]int64{}}
	if o == nil {
		f.say("warning", "not read: %s", readErr)
		return oa, f.out
	}
	if o.Enable || o.Loaded && !o.DirectivesRead {
		for _, p := range o.Problems {
			f.say("info", "part of the status script's answer was refused: %s", p)
		}
	}
	if ok, turnOn := f.sizable(o, through); !ok {
		if turnOn {
			oa.Knobs = append(oa.Knobs, "opcache.enable=on")
		}
		return oa, f.out
	}
	iOld := f.internedStrings(o)
	f.memory(o, iOld)
	f.keyTable(o)
	oa.HitRate = f.hitRate(o.Status)
	f.revalidation(o, measured)
	f.jit(o, measured)
	f.realpathCache(o.Realpath)
	oa.Knobs = append(oa.Knobs, f.knobs()...)
	return oa, f.out
}

// opcacheFindings collects the findings about one opcache reading and
// the knob values they recommend.
type opcacheFindings struct {
	where string
	out   []Finding
	rec   map[string]int64 // knob -> value (sizes in their unit)
}

func (f *opcacheFindings) say(sev, format string, args ...any) {
	f.out = append(f.out, Finding{Severity: sev, Message: f.where + fmt.Sprintf(format, args...)})
}

// sizable says whether the reading has a status to size opcache from,
// and says why not when it has none; turnOn is true when the reason is
// that opcache is off, and the advice is to turn it on.
func (f *opcacheFindings) sizable(o *Opcache, through string) (ok, turnOn bool) {
	switch {
	case !o.Loaded:
		f.say("warning", "opcache is not loaded in pool %s's PHP (or its functions are disabled): every request compiles every script it includes; load it (zend_extension=opcache) and set opcache.enable=1", through)
		return false, false
	case !o.DirectivesRead:
		f.say("warning", "opcache's directives were not read from pool %s (the refused parts above say why), so opcache is not sized; run advise --opcache again, and if it recurs check the pool's auto_prepend_file", through)
		return false, false
	case !o.Enable || o.Status == nil:
		if o.RestrictAPI != "" && o.Enable {
			f.say("warning", "opcache.restrict_api = %s: opcache_get_status refuses a script outside that path, so nothing was read", o.RestrictAPI)
			return false, false
		}
		f.say("warning", "opcache is off (opcache.enable=0): every request compiles every script it includes; turn it on")
		return false, true
	}
	return true, false
}

// oneMiB is a mebibyte in bytes.
const oneMiB = 1 << 20

// internedStrings checks the interned strings buffer and returns its
// size as configured (MiB). It goes first: the buffer lives inside
// memory_consumption, which grows with it.
func (f *opcacheFindings) internedStrings(o *Opcache) (iOld int64) {
	s := o.Status
	iOld = o.InternedBufferMiB
	if s.InternedBufferB > 0 && share(s.InternedUsedB, s.InternedBufferB) > 1-OpcacheFull {
		iNew := clampKnob(sizing.KnobInternedStrings, roundUp(int64(sizing.Headroom*float64(s.InternedUsedB)), 8*oneMiB)/oneMiB)
		if iNew > iOld {
			f.rec[sizing.KnobInternedStrings] = iNew
		}
		f.say("warning", "the interned strings buffer is full: %s of %s (%d strings); new strings go to each worker's own memory. opcache.interned_strings_buffer %d -> %d (%.0f× what it holds, a multiple of 8 MiB)",
			mib(s.InternedUsedB), mib(s.InternedBufferB), s.InternedStrings, iOld, max(iNew, iOld), sizing.Headroom)
	}
	return iOld
}

// memory checks opcache's shared memory, which must also make room for
// the interned strings buffer's growth over iOld.
func (f *opcacheFindings) memory(o *Opcache, iOld int64) {
	s := o.Status
	mOld := o.MemoryConsumptionB / oneMiB
	total := s.UsedB + s.FreeB + s.WastedB
	held := s.UsedB + s.WastedB
	switch {
	case total > 0 && (share(s.FreeB, total) < OpcacheFull || s.OOMRestarts > 0):
		target := int64(sizing.Headroom * float64(held))
		cause := fmt.Sprintf("%s free of %s (%s used, %s wasted by scripts changed since they were cached)", mib(s.FreeB), mib(total), mib(s.UsedB), mib(s.WastedB))
		if s.OOMRestarts > 0 {
			// A restart empties the cache: what it holds now
			// understates the need.
			target = max(target, int64(sizing.Headroom*float64(total)))
			cause += fmt.Sprintf(", %d restarts for lack of memory (each empties the cache: every script compiles again)", s.OOMRestarts)
		}
		mNew := clampKnob(sizing.KnobOpcacheMemory, roundUp(target, 16*oneMiB)/oneMiB+max(0, f.rec[sizing.KnobInternedStrings]-iOld))
		if mNew > mOld {
			f.rec[sizing.KnobOpcacheMemory] = mNew
		}
		f.say("warning", "opcache's memory is full: %s. opcache.memory_consumption %d -> %d (%.0f× what it holds, a multiple of 16 MiB)", cause, mOld, max(mNew, mOld), sizing.Headroom)
	case f.rec[sizing.KnobInternedStrings] > iOld:
		f.rec[sizing.KnobOpcacheMemory] = clampKnob(sizing.KnobOpcacheMemory, mOld+f.rec[sizing.KnobInternedStrings]-iOld)
		f.say("info", "opcache.memory_consumption %d -> %d: the interned strings buffer grows by %d MiB inside it, so the scripts keep their room (%s free of %s)",
			mOld, f.rec[sizing.KnobOpcacheMemory], f.rec[sizing.KnobInternedStrings]-iOld, mib(s.FreeB), mib(total))
	default:
		f.say("info", "memory: %s used, %s free, %s wasted of %s; no restart for lack of memory", mib(s.UsedB), mib(s.FreeB), mib(s.WastedB), mib(total))
	}
}

// keyTable checks opcache's hash table of scripts.
func (f *opcacheFindings) keyTable(o *Opcache) {
	s := o.Status
	slots := s.MaxCachedKeys
	if slots <= 0 {
		slots = sizing.KeySlots(o.MaxAcceleratedFiles)
	}
	switch {
	case share(s.CachedKeys, slots) > 1-OpcacheFull || s.HashRestarts > 0 || (o.MaxAcceleratedFiles > 0 && s.CachedScripts > o.MaxAcceleratedFiles):
		kNew := clampKnob(sizing.KnobMaxFiles, sizing.KeySlots(max(int64(sizing.Headroom*float64(s.CachedKeys)), slots+1)))
		if kNew > o.MaxAcceleratedFiles {
			f.rec[sizing.KnobMaxFiles] = kNew
		}
		f.say("warning", "opcache's key table is (nearly) full: %d scripts cached under %d keys in %d slots (opcache.max_accelerated_files %d, which PHP rounds up to the next prime of its table), %d restarts for lack of keys; a script that finds no slot is compiled on every request. opcache.max_accelerated_files %d -> %d (the prime PHP uses for %.0f× the keys)",
			s.CachedScripts, s.CachedKeys, slots, o.MaxAcceleratedFiles, s.HashRestarts, o.MaxAcceleratedFiles, max(kNew, o.MaxAcceleratedFiles), sizing.Headroom)
	default:
		f.say("info", "keys: %d scripts cached under %d keys of %d slots (opcache.max_accelerated_files %d)", s.CachedScripts, s.CachedKeys, slots, o.MaxAcceleratedFiles)
	}
}

// hitRate judges the hit rate since opcache started and returns it (-1
// before the first lookup).
func (f *opcacheFindings) hitRate(s *results.OpcacheStatus) float64 {
	n := s.Hits + s.Misses
	if n <= 0 {
		return -1
	}
	rate := float64(s.Hits) / float64(n)
	switch {
	case n < MinLookups:
		f.say("info", "hit rate %.1f%% over only %d lookups since opcache started: too few to judge", 100*rate, n)
	case rate < MinOpcacheHitRate:
		f.say("warning", "hit rate %.1f%%: %d misses in %d lookups since opcache started; each miss compiles a script (a cache too small, restarts, or deploys with timestamps on)", 100*rate, s.Misses, n)
	default:
		f.say("info", "hit rate %.1f%% (%d lookups since opcache started)", 100*rate, n)
	}
	return rate
}

// revalidation checks how often opcache stats the scripts it holds.
func (f *opcacheFindings) revalidation(o *Opcache, measured []results.Decision) {
	switch {
	case o.ValidateTimestamps && o.RevalidateFreq == 0:
		f.rec["opcache.revalidate_freq"] = 2
		f.say("warning", "opcache.validate_timestamps is on with opcache.revalidate_freq 0: opcache stats every script a request includes, on every request. opcache.revalidate_freq 0 -> 2 (Debian's default: a changed script is seen within 2 s)")
	case o.ValidateTimestamps:
		f.say("info", "opcache.validate_timestamps is on, revalidate_freq %d: opcache stats each cached script at most once every %d s to see whether it changed (a stat per script, not per request); off saves those stats, but a deploy then needs a php-fpm reload to be seen. %s",
			o.RevalidateFreq, o.RevalidateFreq, measuredSay(measured, "opcache.validate_timestamps=off", "phptune tune measures it (its challenge opcache.validate_timestamps=off): advise sends no load and cannot"))
	default:
		f.say("info", "opcache.validate_timestamps is off: a changed script runs its old code until php-fpm reloads")
	}
}

// jit checks the JIT's mode and buffer (PHP 8.0 and later).
func (f *opcacheFindings) jit(o *Opcache, measured []results.Decision) {
	s := o.Status
	jitOff := o.JIT == "" || o.JIT == "off" || o.JIT == "disable" || o.JIT == "0" || o.JITBufferB == 0
	switch {
	case !o.HasJIT:
		// PHP before 8.0: no JIT.
	case jitOff:
		mode := o.JIT
		if mode == "" {
			mode = "unset"
		}
		f.say("info", "the JIT is off (opcache.jit %s, opcache.jit_buffer_size %s). %s", mode, knob.FormatSize(o.JITBufferB),
			measuredSay(measured, "jit=", "phptune tune measures it (its challenge jit=tracing,64M): it pays on CPU-bound pages, little where requests wait on the database; advise sends no load and cannot tell"))
	case s.JIT != nil && s.JIT.On && s.JIT.BufferB > 0 && share(s.JIT.BufferFreeB, s.JIT.BufferB) < OpcacheFull:
		used := s.JIT.BufferB - s.JIT.BufferFreeB
		jNew := clampKnob(sizing.KnobJITBuffer, roundUp(int64(sizing.Headroom*float64(used)), 16*oneMiB))
		if jNew > o.JITBufferB {
			f.rec[sizing.KnobJITBuffer] = jNew
		}
		f.say("warning", "the JIT's buffer is full: %s of %s written; the JIT stops compiling and the rest runs interpreted. opcache.jit_buffer_size -> %s", mib(used), mib(s.JIT.BufferB), knob.FormatSize(max(jNew, o.JITBufferB)))
	}
}

// realpathCache checks the realpath cache of the worker that answered
// (nil: not read).
func (f *opcacheFindings) realpathCache(r *results.RealpathStatus) {
	if r == nil || r.SizeB <= 0 {
		return
	}
	if share(r.UsedB, r.SizeB) > 1-OpcacheFull {
		v := clampKnob("realpath_cache_size", roundUp(int64(sizing.Headroom*float64(r.UsedB)), oneMiB))
		if v > r.SizeB {
			f.rec["realpath_cache_size"] = v
		}
		f.say("warning", "the realpath cache of the worker that answered is full: %s of %s, %d paths; each worker resolves the rest again on every include. realpath_cache_size -> %s", mib(r.UsedB), mib(r.SizeB), r.Entries, knob.FormatSize(max(v, r.SizeB)))
	} else {
		f.say("info", "realpath cache of the worker that answered: %s of %s, %d paths (each worker has its own)", mib(r.UsedB), mib(r.SizeB), r.Entries)
	}
}

// knobs writes the recommended values as KNOB=VALUE, in the knob
// model's order.
func (f *opcacheFindings) knobs() []string {
	var out []string
	for _, k := range knob.All() {
		v, ok := f.rec[k.Name]
		if !ok {
			continue
		}
		s := strconv.FormatInt(v, 10)
		if k.Kind == knob.Size {
			s = knob.FormatSize(v)
		}
		out = append(out, k.Name+"="+s)
	}
	return out
}

// measuredSay quotes a stored tune's decision whose name starts with
// prefix, or says otherwise.
func measuredSay(measured []results.Decision, prefix, otherwise string) string {
	for _, d := range measured {
		if !strings.HasPrefix(d.Name, prefix) {
			continue
		}
		if d.Skipped != "" {
			return fmt.Sprintf("The stored tune did not measure %s: %s.", d.Name, d.Skipped)
		}
		adopted := "kept the incumbent"
		if d.Adopted {
			adopted = "adopted it"
		}
		stat := d.Statistic
		if stat == "" {
			stat = "throughput"
		}
		return fmt.Sprintf("The stored tune measured %s: %s ×%.2f [%.2f, %.2f], %s (%d rounds), and %s.", d.Name, stat, d.Ratio, d.CILow, d.CIHigh, d.Verdict, d.Rounds, adopted)
	}
	return otherwise + "."
}

// clampKnob keeps v within knob name's range.
func clampKnob(name string, v int64) int64 {
	k, err := knob.Lookup(name)
	if err != nil {
		return v
	}
	return min(max(v, k.Min), k.Max)
}

func share(part, whole int64) float64 {
	if whole <= 0 {
		return 0
	}
	return float64(part) / float64(whole)
}
