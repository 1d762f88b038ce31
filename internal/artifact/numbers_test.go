package artifact

import (
	"regexp"
	"testing"
)

var (
	octalLookingRE = regexp.MustCompile(`^[-+]?0[0-9]+$`)
	decimalIntRE   = regexp.MustCompile(`^[-+]?(0|[1-9][0-9]*)$`)
	decimalFloatRE = regexp.MustCompile(`^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$`)
)

// sameNumberShapes fails unless the hand-written matchers agree with the
// regular expressions they replace.
func sameNumberShapes(t *testing.T, s string) {
	t.Helper()
	for _, m := range []struct {
		name string
		got  bool
		re   *regexp.Regexp
	}{
		{"octalLooking", octalLooking(s), octalLookingRE},
		{"decimalInt", decimalInt(s), decimalIntRE},
		{"decimalFloat", decimalFloat(s), decimalFloatRE},
	} {
		if want := m.re.MatchString(s); m.got != want {
			t.Errorf("%s(%q) = %v, want %v", m.name, s, m.got, want)
		}
	}
}

var numberShapeSeeds = []string{
	"", "0", "00", "-0", "+0", "0755", "-0755", "+", "-", "1", "10", "01", "1.", ".5", ".", "1.5", "-1.5e3",
	"1e", "1e+", "1e+5", "1E-05", ".e5", "1.e5", "0x1F", "1_000", "١", "1.5.5", "--1", "+-1", "1e5e5",
	"99999999999999999999", "0.0", "00.5", "0755\n", "\n0755", " 1", "1 ", "inf", ".inf", "NaN",
}

func TestNumberShapes(t *testing.T) {
	for _, s := range numberShapeSeeds {
		sameNumberShapes(t, s)
	}
}

func FuzzNumberShapes(f *testing.F) {
	for _, s := range numberShapeSeeds {
		f.Add(s)
	}
	f.Fuzz(sameNumberShapes)
}
