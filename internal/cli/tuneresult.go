package cli

import (
	"errors"
	"io/fs"
	"path/filepath"

	"github.com/phptune/phptune/internal/model/results"
)

// tuneFPMVersion is the php-fpm version a tune's result.json says it
// measured on ("8.2.36"); "" when result is "", missing (a directory with
// recommended.knobs only) or names none. The file is read as a trusted
// one: root refuses a result another account could have written.
func tuneFPMVersion(result string) (string, error) {
	if result == "" {
		return "", nil
	}
	b, err := readTrusted(result)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	v, err := results.TuneFPMVersion(b)
	if err != nil {
		return "", usageErr("Give the tune's directory as phptune tune wrote it, or --knobs FILE", "%s is not a tune's result", result)
	}
	return v, nil
}

// tuneQuote is the verdict of the tune whose recommendation knobFile is:
// the result.json beside a recommended.knobs, read as a trusted file; nil
// for another knob file or one without its result.
func tuneQuote(knobFile string) (*results.TuneQuote, error) {
	if filepath.Base(knobFile) != "recommended.knobs" {
		return nil, nil
	}
	result := filepath.Join(filepath.Dir(knobFile), "result.json")
	b, err := readTrusted(result)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	q, err := results.QuoteTune(b)
	if err != nil {
		return nil, usageErr("Give the tune's directory as phptune tune wrote it, or a knob file of your own", "%s: %v", result, err)
	}
	return q, nil
}
