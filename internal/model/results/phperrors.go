package results

// PHPErrors are PHP's own messages (fatal errors, warnings, deprecations,
// notices) that the web server's error log held for a run's measured
// part, counted by class and by the file that raised them.
type PHPErrors struct {
	// Classes are the classes PHP logged, most severe first (fatal,
	// warning, deprecation, notice); a class with no message is absent.
	Classes []PHPErrorClass `json:"classes"`
}

// PHPErrorClass is every message of one class.
type PHPErrorClass struct {
	Class string `json:"class"` // "fatal", "warning", "deprecation", "notice"
	Count int64  `json:"count"`
	// Files are the files with most messages of the class, most first (at
	// most ten).
	Files []PHPErrorFile `json:"files"`
	// OtherFiles counts the messages of files not in Files.
	OtherFiles int64 `json:"other_files,omitempty"`
}

// PHPErrorFile is how many messages of one class one file raised.
type PHPErrorFile struct {
	// File is the path PHP named, relative to the lab's document root
	// when under it; "" when PHP named no file, "(other files)" for the
	// files past the count phptune keeps apart.
	File  string `json:"file"`
	Count int64  `json:"count"`
	// Example is the first such message without its place, cut to 240
	// bytes and made safe to show like ServerErrorClass.Example.
	Example string `json:"example"`
}
