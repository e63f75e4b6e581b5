package lab

// Exported for the external tests (package lab_test), which drive the
// CLI against a lab.
var (
	TestHome  = testHome
	TreeSums  = treeSums
	EqualSums = equalSums
)

const (
	NoCronName    = noCronName
	LiveKnobsName = LiveKnobsFile
)
