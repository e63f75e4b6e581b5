package site

// Secret is a password read from an application's configuration. It is
// kept for the lab that will need it, but every way of printing it (fmt's
// verbs, JSON) writes "<redacted>" (or "" when there is none): only
// Reveal gives the value, and only the code that logs in may call it.
type Secret struct{ v string }

// NewSecret wraps a password.
func NewSecret(v string) Secret { return Secret{v: v} }

// Reveal is the password itself.
func (s Secret) Reveal() string { return s.v }

// Set reports whether there is a password.
func (s Secret) Set() bool { return s.v != "" }

// String is "<redacted>", or "" for no password.
func (s Secret) String() string {
	if s.v == "" {
		return ""
	}
	return "<redacted>"
}

// GoString is String, so that %#v does not print the value either.
func (s Secret) GoString() string { return s.String() }

// MarshalJSON writes String.
func (s Secret) MarshalJSON() ([]byte, error) { return []byte(`"` + s.String() + `"`), nil }

// MarshalText writes String (for encoders that prefer text).
func (s Secret) MarshalText() ([]byte, error) { return []byte(s.String()), nil }
