package imageref

import "testing"

func TestParse(t *testing.T) {
	good := map[string]Ref{
		"nginx@1.25#linux":                {"nginx", "1.25", "linux"},
		"sensor/reader@2.0.1-rc1#sylixos": {"sensor/reader", "2.0.1-rc1", "sylixos"},
		"a.b_c-d@latest#linux":            {"a.b_c-d", "latest", "linux"},
	}
	for in, want := range good {
		got, err := Parse(in)
		if err != nil || got != want {
			t.Errorf("Parse(%q) = %+v, %v; want %+v", in, got, err, want)
		}
		if got.String() != in {
			t.Errorf("String() = %q, want %q", got.String(), in)
		}
	}
	for _, in := range []string{"", "nginx", "nginx@1.25", "nginx#linux", "Nginx@1#linux", "nginx@1#Linux", "nginx@@1#linux", "/nginx@1#linux", "nginx@.1#linux", "nginx@1#linux#x"} {
		if _, err := Parse(in); err == nil {
			t.Errorf("Parse(%q) succeeded, want an error", in)
		}
	}
}
