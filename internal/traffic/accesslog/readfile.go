package accesslog

import "os"

// ReadFile opens the access log at path and summarises it (Read). An
// error opening or reading the file is the file system's (*fs.PathError);
// any other error is Read's refusal of its content.
func ReadFile(path string, opt Options) (*Summary, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	return Read(fh, opt)
}
