package lab

import "testing"

func TestPrintableDropsEscapes(t *testing.T) {
	in := "ok\tline\n\x1b]52;c;ZXZpbA==\x07\x1b[2J\u009bend"
	if got := printable(in); got != "ok\tline\n?]52;c;ZXZpbA==??[2J?end" {
		t.Fatalf("printable(%q) = %q", in, got)
	}
}
