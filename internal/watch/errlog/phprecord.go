package errlog

import (
	"fmt"
	"sort"
	"strings"

	"github.com/phptune/phptune/internal/base/termsafe"
	"github.com/phptune/phptune/internal/model/results"
)

// PHPFilesPerClass bounds the files a record lists per class of PHP's
// messages; the rest are counted in OtherFiles.
const PHPFilesPerClass = 10

// Bounds of the text a record keeps of a hostile line (after escaping).
const (
	phpRecordFileLimit    = 512
	phpRecordExampleLimit = 300
)

// PHPRecord is the record of a tally: its classes in PHPClasses order,
// each with its PHPFilesPerClass files of most messages, the files and
// examples made safe to show; nil when the tally counted nothing.
func PHPRecord(t *PHPTally) *results.PHPErrors {
	return phpRecord(t.Counts())
}

func phpRecord(counts []PHPFileCount) *results.PHPErrors {
	var out results.PHPErrors
	for _, class := range PHPClasses {
		var fs []PHPFileCount
		for _, c := range counts {
			if c.Class == class && c.Count > 0 {
				fs = append(fs, c)
			}
		}
		if len(fs) == 0 {
			continue
		}
		sort.SliceStable(fs, func(i, j int) bool {
			if fs[i].Count != fs[j].Count {
				return fs[i].Count > fs[j].Count
			}
			return fs[i].File < fs[j].File
		})
		rc := results.PHPErrorClass{Class: class, Files: []results.PHPErrorFile{}}
		for i, f := range fs {
			rc.Count += f.Count
			if i >= PHPFilesPerClass {
				rc.OtherFiles += f.Count
				continue
			}
			rc.Files = append(rc.Files, results.PHPErrorFile{File: safeCut(f.File, phpRecordFileLimit), Count: f.Count, Example: safeCut(f.Example, phpRecordExampleLimit)})
		}
		out.Classes = append(out.Classes, rc)
	}
	if len(out.Classes) == 0 {
		return nil
	}
	return &out
}

// MergePHP sums the PHP messages of several runs' records (a tune's
// holdout rounds of one configuration) into one, with the same bounds;
// the messages a record counted in OtherFiles stay there. nil when none
// has any.
func MergePHP(records ...*results.PHPErrors) *results.PHPErrors {
	type key struct{ class, file string }
	sum := map[key]*PHPFileCount{}
	other := map[string]int64{}
	for _, r := range records {
		if r == nil {
			continue
		}
		for _, c := range r.Classes {
			for _, f := range c.Files {
				k := key{c.Class, f.File}
				if sum[k] == nil {
					sum[k] = &PHPFileCount{Class: c.Class, File: f.File, Example: f.Example}
				}
				sum[k].Count += f.Count
			}
			other[c.Class] += c.OtherFiles
		}
	}
	counts := make([]PHPFileCount, 0, len(sum))
	for _, c := range sum {
		counts = append(counts, *c)
	}
	out := phpRecord(counts)
	for _, class := range PHPClasses {
		n := other[class]
		if n == 0 {
			continue
		}
		if out == nil {
			out = &results.PHPErrors{}
		}
		c := phpClass(out, class)
		c.Count += n
		c.OtherFiles += n
	}
	return out
}

// phpClass is p's class called class, added in PHPClasses order when p has
// none.
func phpClass(p *results.PHPErrors, class string) *results.PHPErrorClass {
	for i := range p.Classes {
		if p.Classes[i].Class == class {
			return &p.Classes[i]
		}
	}
	p.Classes = append(p.Classes, results.PHPErrorClass{Class: class, Files: []results.PHPErrorFile{}})
	sortPHPClasses(p.Classes)
	for i := range p.Classes {
		if p.Classes[i].Class == class {
			return &p.Classes[i]
		}
	}
	panic("unreachable")
}

func sortPHPClasses(cs []results.PHPErrorClass) {
	rank := func(c string) int {
		for i, n := range PHPClasses {
			if n == c {
				return i
			}
		}
		return len(PHPClasses)
	}
	sort.SliceStable(cs, func(i, j int) bool { return rank(cs[i].Class) < rank(cs[j].Class) })
}

// PHPLine says in one sentence what PHP logged during a run: "PHP logged
// 312 deprecations (top: wp-includes/class-wp.php 300) and 4 warnings
// (top: index.php 4) during the run"; "" when nothing.
func PHPLine(p *results.PHPErrors) string {
	if p == nil {
		return ""
	}
	var parts []string
	for _, c := range p.Classes {
		if c.Count <= 0 {
			continue
		}
		s := fmt.Sprintf("%d %s", c.Count, phpClassNoun(c.Class, c.Count))
		if len(c.Files) > 0 {
			f := c.Files[0].File
			if f == "" {
				f = "(no file named)"
			}
			s += fmt.Sprintf(" (top: %s %d)", termsafe.Line(f), c.Files[0].Count)
		}
		parts = append(parts, s)
	}
	switch len(parts) {
	case 0:
		return ""
	case 1:
		return "PHP logged " + parts[0] + " during the run"
	}
	return "PHP logged " + strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1] + " during the run"
}

// phpClassNoun names n messages of class: "fatal error(s)", "warning(s)",
// "deprecation(s)", "notice(s)".
func phpClassNoun(class string, n int64) string {
	noun := class
	if class == PHPFatal {
		noun = "fatal error"
	}
	if n != 1 {
		noun += "s"
	}
	return termsafe.Line(noun)
}
