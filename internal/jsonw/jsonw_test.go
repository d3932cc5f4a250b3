package jsonw

import (
	"encoding/json"
	"testing"
)

// TestAppendString: what AppendString writes decodes to s, for valid UTF-8, and is what
// encoding/json writes without its HTML escapes.
func TestAppendString(t *testing.T) {
	for _, s := range []string{"", "plain", `q"uote\back`, "tab\tnl\ncr\r\x00\x1f", "é ü 日本 🎉", "a<b>&c", "12345678" + "9abcdefgh\"ij"} {
		got := AppendString(nil, s)
		var back string
		if err := json.Unmarshal(got, &back); err != nil || back != s {
			t.Errorf("AppendString(%q) = %s, which decodes to %q (%v)", s, got, back, err)
		}
	}
	if got := string(AppendString(nil, "a\xffb")); got != `"a\ufffdb"` {
		t.Errorf("invalid UTF-8: got %s", got)
	}
}

func TestAppendPointerSegments(t *testing.T) {
	for ptr, want := range map[string]string{
		"":                  `[]`,
		"/items/2/quantity": `["items",2,"quantity"]`,
		"/a~1b/~0c/01":      `["a/b","~c","01"]`,
		"/1234567890":       `["1234567890"]`,
		"/":                 `[""]`,
	} {
		if got := string(AppendPointerSegments(nil, ptr)); got != want {
			t.Errorf("AppendPointerSegments(%q) = %s, want %s", ptr, got, want)
		}
	}
}
