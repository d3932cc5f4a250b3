package server

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestRepeatedMember(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		js    string
		found bool
		ptr   string
		off   int
	}{
		{`{"a":1,"b":2}`, false, "", 0},
		{`{"a":{"x":1},"b":{"x":1}}`, false, "", 0},
		{`{"a":1,"a":2}`, true, "/a", 7},
		{`{"a":1, "\u0061":2}`, true, "/a", 8},
		{`[{"x":1},{"y":[1,{"k/~":1,"k/~":2}]}]`, true, "/1/y/1/k~1~0", 26},
		{` { "list" : [ ] , "o" : { } , "o" : 1 } `, true, "/o", 30},
		{"{\"a\":\"\xff\",\"a\":1}", false, "", 0}, // invalid UTF-8: not read further
		{`{"a":1,"b":2`, false, "", 0},
		{``, false, "", 0},
	} {
		ptr, off, found := repeatedMember(c.js)
		assert.Equal(t, c.found, found, "%q", c.js)
		assert.Equal(t, c.ptr, ptr, "%q", c.js)
		assert.Equal(t, c.off, off, "%q", c.js)
	}
}
