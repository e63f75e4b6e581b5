package knob

import "os"

// ApplyFileAt reads the knob file at path and applies it to c
// (ApplyFile). An error reading the file is the file system's
// (*fs.PathError); any other error is ApplyFile's refusal of a line.
func (c Config) ApplyFileAt(path string) (Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return c.ApplyFile(string(data))
}
