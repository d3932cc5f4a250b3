package tools

import (
	"crypto/sha256"
	"encoding/base32"
	"strings"
)

// MaxToolNameLen is the most characters a portable tool name has (see PortableToolName).
const MaxNameLen = 63

// nameHashLen is the length of the hash suffix a portable name takes when it was cut or
// collides with another: 40 bits, in the alphabet of tool names.
const nameHashLen = 8

// nameHash is base32 in lower case: letters and digits only, valid in any tool name.
var nameHash = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

// PortableToolName returns name as a tool name that every model API remedy writes definitions
// for accepts: it starts with a letter or '_', holds only ASCII letters, digits, '_' and '-',
// and has at most MaxToolNameLen characters. That is the strictest rule the APIs state:
// OpenAI's and Anthropic's ^[a-zA-Z0-9_-]{1,64}$, Gemini's "must start with a letter or an
// underscore", and the 63 characters of Firebase's Gemini.
//
// A name that already follows the rule is returned as it is. Otherwise every run of other
// characters (a dot, a slash, a space, a colon, anything not ASCII) becomes one '_', and
// underscores at either end are dropped: "BillingController.createInvoice" is
// "BillingController_createInvoice", "/v1/orders" is "v1_orders". A name that would then start
// with a digit or '-' gets a leading '_'. A name longer than the limit is cut and ends with '_'
// and a hash of the whole original (8 letters and digits), so that two long names sharing
// their start stay apart; a name with nothing left ("名前") is "tool_" and that hash.
//
// The mapping is deterministic and depends on name alone. Two names can still map to one
// ("a.b" and "a/b"): a Toolset tells them apart (see NewToolset), and its Dispatch accepts
// both the portable name and the original.
func PortableName(name string) string {
	if validToolName(name) {
		return name
	}
	stem := toolNameStem(name)
	if stem == "" || len(stem) > MaxNameLen {
		return suffixed(stem, name, nameHashLen)
	}
	return stem
}

// toolNameStem is name with every run of characters a tool name cannot hold (underscores
// among them) made one '_', none at either end, and a leading '_' before a digit or '-'.
// It may be longer than the limit, or empty.
func toolNameStem(name string) string {
	var b strings.Builder
	b.Grow(min(len(name), MaxNameLen+1))
	gap := false
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !toolNameByte(c) || c == '_' {
			gap = true
			continue
		}
		if b.Len() == 0 && (c == '-' || c >= '0' && c <= '9') {
			b.WriteByte('_')
		} else if gap && b.Len() > 0 {
			b.WriteByte('_')
		}
		gap = false
		b.WriteByte(c)
	}
	return b.String()
}

// validToolName reports whether name follows the portable rule as it is.
func validToolName(name string) bool {
	if name == "" || len(name) > MaxNameLen {
		return false
	}
	if c := name[0]; c == '-' || (c >= '0' && c <= '9') {
		return false
	}
	for i := 0; i < len(name); i++ {
		if !toolNameByte(name[i]) {
			return false
		}
	}
	return true
}

// toolNameByte reports whether c may appear in a portable tool name.
func toolNameByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

// suffixed is stem, cut so that '_' and n characters of the hash of original fit in the
// limit, followed by them; "tool" stands for an empty stem.
func suffixed(stem, original string, n int) string {
	if stem == "" {
		stem = "tool"
	}
	stem = strings.TrimRight(stem[:min(len(stem), MaxNameLen-1-n)], "_-")
	return stem + "_" + hashName(original, n)
}

// hashName is the first n characters of the hash of name (n at most 51).
func hashName(name string, n int) string {
	sum := sha256.Sum256([]byte(name))
	return nameHash.EncodeToString(sum[:])[:n]
}

// maxNameHashLen bounds the suffix portableNames lengthens.
const maxNameHashLen = 32

// portableNames gives each of names (operation names) its tool name: its portable name,
// unless that is another's too, in which case every name of the group that had to change
// takes the hash suffix (a name already portable keeps itself: it is what the model and the
// server both know). Should a suffixed name still meet another (40 bits of hash make it
// unlikely), the suffix lengthens, deterministically.
func portableNames(names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = PortableName(n)
	}
	for n := nameHashLen; n <= maxNameHashLen; n += 4 {
		count := make(map[string]int, len(out))
		for _, s := range out {
			count[s]++
		}
		clash := false
		for i, name := range names {
			if count[out[i]] > 1 && out[i] != name {
				out[i], clash = suffixed(toolNameStem(name), name, n), true
			}
		}
		if !clash {
			break
		}
	}
	return out
}
