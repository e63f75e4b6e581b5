package redact

import (
	"strings"
	"testing"
)

func TestJSON(t *testing.T) {
	in := `{"command":"phptune bench -H 'X-Api-Key: k1' http://127.0.0.1/?token=t1","n":12345678901234567890,` +
		`"extra":{"auth_token":"t2","empty_password":"","note":"ok","/x?key=k3":1},"list":["password=p1",{"secret":7}],"x-tenant":"acme"}`
	out, err := JSON([]byte(in), []string{"X-Tenant"})
	if err != nil {
		t.Fatal(err)
	}
	got := string(out)
	for _, secret := range []string{"k1", "t1", "t2", "k3", "p1", "acme"} {
		if strings.Contains(got, secret) {
			t.Errorf("%s survived: %s", secret, got)
		}
	}
	for _, kept := range []string{`"n":12345678901234567890`, `"empty_password":""`, `"note":"ok"`, `"secret":7`, `"/x?key=<redacted>":1`, `-H 'X-Api-Key: <redacted>'`} {
		if !strings.Contains(got, kept) {
			t.Errorf("lacks %s: %s", kept, got)
		}
	}
	if again, _ := JSON(out, []string{"X-Tenant"}); string(again) != got {
		t.Errorf("not idempotent:\n%s\n%s", got, again)
	}
	if _, err := JSON([]byte("{"), nil); err == nil {
		t.Error("broken JSON accepted")
	}
}

func TestValue(t *testing.T) {
	type rec struct {
		Command string            `json:"command"`
		Config  map[string]string `json:"config"`
		N       int               `json:"n"`
	}
	r := rec{Command: "--password=p1", Config: map[string]string{"db.password": "p2", "pm": "static"}, N: 3}
	if err := Value(&r, nil); err != nil {
		t.Fatal(err)
	}
	if r.Command != "--password=<redacted>" || r.Config["db.password"] != Placeholder || r.Config["pm"] != "static" || r.N != 3 {
		t.Errorf("%+v", r)
	}
}
