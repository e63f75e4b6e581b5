package termsafe

import "io"

// Writer passes what is written to it on to its underlying writer as
// Text: newlines and tabs kept, every other control character escaped.
// It is for printers that write text from outside phptune line by line
// (a plan quoting a host's paths and versions); each Write is escaped on
// its own, so a character split across two writes is shown as the bytes
// it was cut into (fmt's functions write whole strings).
type Writer struct {
	w io.Writer
}

// NewWriter returns a Writer writing to w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

// Write writes p as Text to the underlying writer. It reports len(p)
// written when the escaped text was written whole.
func (sw *Writer) Write(p []byte) (int, error) {
	if _, err := io.WriteString(sw.w, Text(string(p))); err != nil {
		return 0, err
	}
	return len(p), nil
}
