package livehost

import "testing"

func TestStatusUIDs(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want [4]int
		ok   bool
	}{
		{"Name:\tnginx\nUid:\t0\t0\t0\t0\nGid:\t0\t0\t0\t0\n", [4]int{0, 0, 0, 0}, true},
		{"Uid:\t65534\t0\t0\t0\n", [4]int{65534, 0, 0, 0}, true},
		{"Uid:\t0\t0\t0\n", [4]int{}, false},
		{"Uid:\t0\t0\tx\t0\n", [4]int{}, false},
		{"Uid:\t-1\t0\t0\t0\n", [4]int{}, false},
		{"Name:\tnginx\n", [4]int{}, false},
	} {
		got, err := statusUIDs([]byte(tt.in))
		if (err == nil) != tt.ok || (tt.ok && got != tt.want) {
			t.Errorf("statusUIDs(%q) = %v, %v; want %v ok=%v", tt.in, got, err, tt.want, tt.ok)
		}
	}
}

func FuzzStatusUIDs(f *testing.F) {
	f.Add([]byte("Name:\tnginx\nUid:\t0\t0\t0\t0\n"))
	f.Add([]byte("Uid:\t33\t33\t33\t33\nUid:\t0\t0\t0\t0\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		uids, err := statusUIDs(b)
		if err != nil {
			return
		}
		for _, u := range uids {
			if u < 0 {
				t.Fatalf("negative uid %v from %q", uids, b)
			}
		}
	})
}
