package cli

import (
	"errors"
	"io/fs"

	"github.com/phptune/phptune/internal/results"
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
