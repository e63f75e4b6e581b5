package results

import "testing"

func TestTuneFPMVersion(t *testing.T) {
	for _, c := range []struct {
		in, want string
		bad      bool
	}{
		{in: `{"environment":{"versions":{"php-fpm":"8.2.28"}}}`, want: "8.2.28"},
		{in: `{"environment":{"versions":{"php":"8.2.28"}}}`, want: ""},
		{in: `{}`, want: ""},
		{in: `not json`, bad: true},
		{in: `{"environment":{"versions":{"php-fpm":8}}}`, bad: true},
	} {
		got, err := TuneFPMVersion([]byte(c.in))
		if (err != nil) != c.bad || got != c.want {
			t.Errorf("TuneFPMVersion(%s) = %q, %v; want %q, error %v", c.in, got, err, c.want, c.bad)
		}
	}
}

func FuzzTuneFPMVersion(f *testing.F) {
	f.Add([]byte(`{"environment":{"versions":{"php-fpm":"8.2.28"}}}`))
	f.Add([]byte(`{"environment":null}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = TuneFPMVersion(b)
	})
}
