package report

import (
	"io"
	"strings"

	"github.com/phptune/phptune/internal/base/termsafe"
)

// safeText writes what write writes to w with every control character
// but newline and tab escaped (termsafe.Text). A run's record holds text
// from outside phptune (page titles, log lines, servers' versions and
// errors, process names), and a text report is read on a terminal.
func safeText(w io.Writer, write func(io.Writer) error) error {
	var b strings.Builder
	err := write(&b)
	if _, werr := io.WriteString(w, termsafe.Text(b.String())); err == nil {
		err = werr
	}
	return err
}
