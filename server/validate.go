package server

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math/big"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"
	"unsafe"

	"github.com/google/jsonschema-go/jsonschema"
	jsv "github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"

	"github.com/remedy-go/remedy"
	"github.com/remedy-go/remedy/internal/jsonscan"
	"github.com/remedy-go/remedy/internal/schemaissue"
)

// inputSchemaURL names the one resource a validator compiles. It is never fetched, and no other
// resource is: a schema that refers outside itself does not compile.
const inputSchemaURL = "mem:///input.json"

// Bounds on what validate reads and echoes.
const (
	// validNumberMaxLen and validNumberMaxExp bound the JSON numbers validate hands to the schema
	// validator, which computes with exact rationals: a thousand-digit exponent would cost
	// seconds, and past a million it would panic. No Go number type needs more.
	validNumberMaxLen = 128
	validNumberMaxExp = 1000
	// issueMaxReceived bounds an issue's Received: a longer value is not echoed back.
	issueMaxReceived = 1024
	// issueMaxListed bounds the values and names a message lists; the issue holds them all.
	// It is also the most unknown members of one object that get an issue each: past it, one
	// issue names issueMaxListed of them and counts the rest.
	issueMaxListed = 10
	// issueMaxEcho bounds, in bytes, a path, a label or a name an issue echoes from the input:
	// a longer one is cut, and ends with an ellipsis (…).
	issueMaxEcho = 200
)

// MaxIssues is the most issues a validation failure lists. Past it, validation stops building
// issues (it only counts them), and one more issue, of code TooManyIssues, ends the list.
const MaxIssues = 100

// TooManyIssues is the code of the issue that ends a list of MaxIssues issues: its path is the
// input's root, and its message says how many more were found and left out ("at least 5 more
// issues" when validation stopped once the issues listed were known, which it does for large
// inputs). The issues listed are the first in path order; repair them and send the call again
// to learn the rest.
const TooManyIssues = "too_many_issues"

// validator is an operation's compiled input schema.
type validator struct {
	root  *jsv.Schema
	fast  *fastCheck             // decides most valid inputs without root; nil when the schema is beyond it
	byLoc map[string]*schemaNode // by the location the compiled schema reports in its errors
	byPtr map[string]*schemaNode // by JSON Pointer within the schema document
	// excerpts are the schema excerpts cut so far, by the subschemas they lead to (see
	// excerpt), at most maxExcerpts of them: the same mistakes come again and again. The map
	// is never changed once stored, so that it is read without a lock (and without making a
	// key: a look-up by string(bytes) allocates nothing); a new excerpt replaces it with a copy
	// under excerptMu.
	excerpts  atomic.Pointer[map[string]json.RawMessage]
	excerptMu sync.Mutex
	// fastOf is the quick check of each subschema indexed, for the pruning (see pruner);
	// prunable is false when the schema holds references resolved at validation time, which
	// make a subschema's verdict on a value depend on where it is met.
	fastOf   map[*jsv.Schema]*fastCheck
	prunable bool
	// plain reports that remedy's encoder keeps the schema document as it is (it writes null
	// for raw JSON nested too deep, with too long a number or a key twice in one object), and
	// so every part of it that a refusal inlines: its refusals are written by encodeMade.
	plain bool
}

// maxExcerpts bounds the excerpts a validator keeps; past it, an excerpt is cut every time.
const maxExcerpts = 256

// schemaNode is one subschema of the input schema, as the envelope shows it.
type schemaNode struct {
	ptr     string          // JSON Pointer of the subschema within the schema document
	raw     json.RawMessage // compact, without $schema and $id
	members []schemaMember  // its keywords, in document order
	// frags and texts are, for each member, what issues quote of it, made once: the member
	// alone as a schema fragment ({"maximum":100}), and its value as text (100).
	frags []json.RawMessage
	texts []string
	sub   map[string][]schemaMember
	sch   *jsv.Schema       // compiled, to check a suggested value before offering it
	enum  []json.RawMessage // the values of its enum, decoded once
	// enumList is enum as a message lists it (see issueValueList); enumNorm holds each string
	// member trimmed and lowercased, for closestEnum, and enumStr marks those members.
	enumList string
	enumNorm []string
	enumStr  []bool
	fast     *fastCheck // sch's quick check, which accepts most suggestions on its own
}

// schemaMember is one member of a JSON object, in document order.
type schemaMember struct {
	key string
	val json.RawMessage
}

// get is the value of n's keyword key, nil when n does not have it.
func (n *schemaNode) get(key string) json.RawMessage {
	for _, m := range n.members {
		if m.key == key {
			return m.val
		}
	}
	return nil
}

// newValidator compiles s once (at registration), as draft 2020-12 unless s names another
// draft, asserting formats and content encodings.
func newValidator(s *jsonschema.Schema) (*validator, error) {
	if s == nil {
		return nil, errors.New("server: nil schema")
	}
	raw, err := json.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("server: encoding the schema: %w", err)
	}
	c, err := newSchemaCompiler(raw)
	if err != nil {
		return nil, err
	}
	root, err := c.Compile(inputSchemaURL)
	if err != nil {
		return nil, fmt.Errorf("server: compiling the schema: %w", err)
	}
	v := &validator{root: root, byLoc: map[string]*schemaNode{}, byPtr: map[string]*schemaNode{}}
	if err := v.index(c, "", raw); err != nil {
		return nil, err
	}
	if v.byPtr[""] == nil {
		return nil, errors.New("server: the input schema is not an object schema")
	}
	v.fast = compileFast(root)
	v.fastOf = make(map[*jsv.Schema]*fastCheck, len(v.byPtr))
	for _, n := range v.byPtr {
		v.fastOf[n.sch] = n.fast
	}
	v.prunable = !bytes.Contains(raw, []byte(`"$dynamicRef"`)) && !bytes.Contains(raw, []byte(`"$recursiveRef"`))
	v.plain = encoderKeeps(raw)
	return v, nil
}

// compileSchema compiles s on its own, as newValidator does.
func compileSchema(s *jsonschema.Schema) (*jsv.Schema, error) {
	raw, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	c, err := newSchemaCompiler(raw)
	if err != nil {
		return nil, err
	}
	return c.Compile(inputSchemaURL)
}

// newSchemaCompiler returns a compiler holding the schema document raw as inputSchemaURL: draft
// 2020-12 by default, formats and content encodings asserted, nothing fetched.
func newSchemaCompiler(raw []byte) (*jsv.Compiler, error) {
	doc, err := decodeInstance(raw)
	if err != nil {
		return nil, fmt.Errorf("server: decoding the schema: %w", err)
	}
	c := jsv.NewCompiler()
	// The schema is the operation's own: a reference out of it (a file, a URL) is refused
	// at registration rather than read from the server's disk.
	c.UseLoader(jsv.SchemeURLLoader{})
	c.DefaultDraft(jsv.Draft2020)
	c.AssertFormat()
	c.AssertContent()
	if err := c.AddResource(inputSchemaURL, doc); err != nil {
		return nil, fmt.Errorf("server: %w", err)
	}
	return c, nil
}

// decodeInstance decodes JSON as validate expects its instance: numbers as json.Number.
func decodeInstance(raw []byte) (any, error) {
	return jsv.UnmarshalJSON(bytes.NewReader(raw))
}

// firstCause is the first leaf message of a validation error, for registration errors.
func firstCause(err error) string {
	var ve *jsv.ValidationError
	if !errors.As(err, &ve) {
		return err.Error()
	}
	for len(ve.Causes) > 0 {
		ve = ve.Causes[0]
	}
	return ve.Error()
}

// Keywords whose values are subschemas, by shape.
var (
	schemaMapKeywords = []string{"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"}
	schemaOneKeywords = []string{"items", "additionalProperties", "not", "if", "then", "else", "contains",
		"propertyNames", "unevaluatedProperties", "unevaluatedItems", "additionalItems", "contentSchema"}
	schemaListKeywords = []string{"allOf", "anyOf", "oneOf", "prefixItems", "items"}
)

// index records the object subschema raw at ptr and those below it.
func (v *validator) index(c *jsv.Compiler, ptr string, raw json.RawMessage) error {
	members, ok := schemaMembersOf(raw)
	if !ok && !bytes.Equal(raw, []byte("true")) && !bytes.Equal(raw, []byte("false")) {
		return nil
	}
	n := &schemaNode{ptr: ptr, raw: raw, members: members} // a boolean schema has no members
	if n.get("$schema") != nil || n.get("$id") != nil {
		n.raw = schemaWriteMembers(nil, slices.DeleteFunc(slices.Clone(members), func(m schemaMember) bool {
			return m.key == "$schema" || m.key == "$id"
		}))
	}
	if raw := n.get("enum"); raw != nil && json.Unmarshal(raw, &n.enum) != nil {
		n.enum = nil
	}
	if n.enum != nil {
		n.enumList = issueValueList(n.enum)
		n.enumNorm, n.enumStr = make([]string, len(n.enum)), make([]bool, len(n.enum))
		for i, a := range n.enum {
			if as, ok := schemaString(a); ok {
				n.enumNorm[i], n.enumStr[i] = strings.ToLower(strings.TrimSpace(as)), true
			}
		}
	}
	n.frags, n.texts = make([]json.RawMessage, len(members)), make([]string, len(members))
	for i, m := range members {
		f := schemaWriteMembers(nil, []schemaMember{m})
		n.frags[i], n.texts[i] = f[:len(f):len(f)], string(m.val)
	}
	loc := inputSchemaURL
	if ptr != "" {
		loc += "#" + encodeFragment(ptr)
	}
	sch, err := c.Compile(loc)
	if err != nil {
		return fmt.Errorf("server: compiling the subschema at %q: %w", ptr, err)
	}
	n.sch, n.fast = sch, compileFast(sch)
	v.byLoc[sch.Location] = n
	v.byPtr[ptr] = n
	for _, m := range members {
		switch {
		case slices.Contains(schemaMapKeywords, m.key):
			subs, ok := schemaMembersOf(m.val)
			if !ok {
				continue
			}
			if n.sub == nil {
				n.sub = map[string][]schemaMember{}
			}
			n.sub[m.key] = subs
			for _, s := range subs {
				if err := v.index(c, ptr+"/"+m.key+"/"+pointerEscape(s.key), s.val); err != nil {
					return err
				}
			}
		case slices.Contains(schemaListKeywords, m.key) && len(m.val) > 0 && m.val[0] == '[':
			var list []json.RawMessage
			if json.Unmarshal(m.val, &list) != nil {
				continue
			}
			for i, s := range list {
				if err := v.index(c, ptr+"/"+m.key+"/"+strconv.Itoa(i), s); err != nil {
					return err
				}
			}
		case slices.Contains(schemaOneKeywords, m.key):
			if err := v.index(c, ptr+"/"+m.key, m.val); err != nil {
				return err
			}
		}
	}
	return nil
}

// schemaMembersOf lists a JSON object's members in order; ok is false when raw is no object.
func schemaMembersOf(raw []byte) ([]schemaMember, bool) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, false
	}
	var out []schemaMember
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, false
		}
		key, _ := t.(string)
		var val json.RawMessage
		if err := dec.Decode(&val); err != nil {
			return nil, false
		}
		out = append(out, schemaMember{key, val})
	}
	return out, true
}

// schemaWriteMembers appends an object made of members.
func schemaWriteMembers(b []byte, members []schemaMember) []byte {
	b = append(b, '{')
	for i, m := range members {
		if i > 0 {
			b = append(b, ',')
		}
		b = jsonAppendString(b, m.key)
		b = append(b, ':')
		b = append(b, m.val...)
	}
	return append(b, '}')
}

// jsonAppendString appends s as a JSON string, as encoding/json writes it.
func jsonAppendString(b []byte, s string) []byte {
	if jsonPlainString(s) && !strings.ContainsAny(s, "<>&") {
		return append(append(append(b, '"'), s...), '"') // what encoding/json writes for it
	}
	q, _ := json.Marshal(s) // a string always encodes
	return append(b, q...)
}

// pointerEscape escapes one JSON Pointer token (RFC 6901).
func pointerEscape(s string) string {
	if !strings.ContainsAny(s, "~/") {
		return s
	}
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// pointerUnescape is the value of one escaped JSON Pointer token.
func pointerUnescape(tok string) string {
	if strings.IndexByte(tok, '~') < 0 {
		return tok
	}
	return strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
}

// pointerJoin joins unescaped tokens into a JSON Pointer.
func pointerJoin(tokens []string) string {
	var b strings.Builder
	for _, t := range tokens {
		b.WriteByte('/')
		b.WriteString(pointerEscape(t))
	}
	return b.String()
}

// encodeFragment writes a pointer as a URI fragment, as the compiler spells its locations.
func encodeFragment(ptr string) string {
	toks := strings.Split(ptr, "/")
	for i, t := range toks {
		toks[i] = url.PathEscape(t)
	}
	return strings.Join(toks, "/")
}

// validate checks an instance (as jsonschema.UnmarshalJSON decodes it: objects as
// map[string]any, arrays as []any, numbers as json.Number) and returns its issues, sorted by
// Path (segment by segment, array indexes in numeric order), then Code, plus the violated
// subschema to inline in the envelope's schema member (nil when valid).
//
// Each issue's Path is the RFC 6901 pointer of the field at fault: the missing property for
// required, the extra property for additional_properties, the array for unique_items. Its Code
// is the keyword in snake_case (required, type, enum, minimum, exclusive_minimum, pattern,
// format, additional_properties, unique_items, ...), and three more: invalid_number for a
// number longer than 128 characters or with an exponent beyond ±1000 (the rest of the instance
// is validated with null in its place, and nothing else is said about it), not_allowed for a
// value a false schema refuses, invalid_value for a Go value that is not JSON. Expected is the
// type name for type, the property's subschema for required, and the violated keyword as a
// schema fragment otherwise ({"maximum":100}); enum and const give AllowedValues instead.
// Received is the value that arrived, compact, when it fits in 1 KiB. SuggestedValue is offered
// only where the repair keeps what the caller meant and only when the value satisfies the
// field's whole subschema: the one value an enum or const allows, the enum member a string
// differs from in case or surrounding space, a missing field's default, or the same value in
// the right type (5 for "5" where an integer is expected, "5" for 5 where a string is, true for
// "true", [x] for x where an array is). A violated bound is not a suggestion: a charge of
// 99999999 is not a charge of 1000000, so the bound is in Expected for the client to propose,
// not to send.
//
// What the input can make large is bounded. There is one issue per violation up to MaxIssues
// of them (the first in the order above), then one issue of code TooManyIssues that counts
// the rest; issues past the bound are counted, not built. An instance of more than 400 values
// is pruned first (see pruner): values past the first MaxIssues+1 issues are not validated, and
// the count of the rest is then a lower bound. An object with more than 10 unknown
// members gets one additional_properties issue, at the object, whose message quotes the first
// 10 names and counts the others, instead of one issue per member. A path, a field's name in a
// message, or a name quoted, is cut at 200 bytes and ends with an ellipsis (…).
//
// violated is the subschema of the field at fault, compact, when every issue concerns the same
// one (for additional_properties, the object that refuses the property). When issues concern
// several, it is an excerpt of the input schema: the root object with only the properties, items
// and additionalProperties that lead to those subschemas, each kept whole, and required cut to
// the properties kept; type is kept on the way, every other keyword dropped. A subschema that
// holds another stands for both.
//
// The result depends only on the instance: the same instance gives byte-identical issues. It
// never panics.
func (v *validator) validate(instance any) (issues []remedy.Issue, violated json.RawMessage) {
	issues, violated, _, _ = v.check(instance)
	return issues, violated
}

// check is validate, and also says how many issues there are in all, those left out included:
// total, or at least total when atLeast is set (an instance of pruneFrom values or more, whose
// validation stopped once the issues listed were known, see pruner).
func (v *validator) check(instance any) (issues []remedy.Issue, violated json.RawMessage, total int, atLeast bool) {
	return v.checkPruned(instance, pruneFrom)
}

// checkPruned is check, pruning instances of more than from values; -1 never prunes.
func (v *validator) checkPruned(instance any, from int) (issues []remedy.Issue, violated json.RawMessage, total int, atLeast bool) {
	if v.fast != nil && v.fast.accepts(instance) {
		return nil, nil, 0, false
	}
	c := issueCollector{v: v, instance: instance}
	checked := instance
	if hasInvalidNumber(instance) {
		checked, _ = c.sanitize(instance, nil)
		slices.SortFunc(c.bad, func(a, b []string) int { return compareLocs(loc{toks: a}, loc{toks: b}) })
	}
	validated := checked
	if v.prunable && from >= 0 && largeValue(checked, from) {
		p := pruner{v: v}
		validated, _, _, c.stand = p.prune(checked, []*jsv.Schema{v.root}, MaxIssues+1)
		c.lossy = p.lossy
	}
	err := v.root.Validate(validated)
	if err == nil && len(c.bad) == 0 && c.stand == nil {
		return nil, nil, 0, false
	}
	var ve *jsv.ValidationError
	switch {
	case err == nil:
	case errors.As(err, &ve):
		c.visit(ve)
	default:
		if c.keep(loc{}, "invalid") {
			c.add(remedy.Issue{Code: "invalid", Message: "the input is invalid: " + clip(err.Error())}, nil, v.byPtr[""])
		}
	}
	c.regenerate(c.stand, nil)
	c.badNumbers()
	if len(c.issues) == 0 && c.left == 0 {
		return nil, nil, 0, false
	}
	return c.finish()
}

// issueCollector gathers the issues of one validate call. It keeps at most 2*MaxIssues of
// them: when it has that many, it keeps the MaxIssues first (see trim), and from then on
// builds no issue that would come after the last one kept.
type issueCollector struct {
	v        *validator
	instance any
	// issues are the issues found (their Path is set by finish), and where says, for each,
	// where it is, the subschema it concerns and how many duplicates of it were dropped. They
	// are two lists, so that the first is the list finish returns, without a copy.
	issues []remedy.Issue
	where  []issueWhere
	bad    [][]string // where numbers too large to validate were, as instance tokens, sorted
	// left counts the issues found and not kept, duplicates of one another included, but not
	// duplicates of an issue kept.
	left int
	// cut is where the last issue kept is, and its code, once issues have been left out:
	// nothing after it can be kept.
	cut     loc
	cutCode string
	full    bool
	// stand is how the value validated stands for the instance, when it was pruned; lossy
	// reports that the pruning left out values that may hold issues.
	stand *standIn
	lossy bool
	text  textArena // where the messages are written
}

// issueWhere is where an issue is in the instance, the subschema it concerns, and how many
// duplicates of it were dropped.
type issueWhere struct {
	toks []string
	node *schemaNode
	dups int
}

// loc is a location in the instance: toks, followed by child when hasChild is set, so that a
// member's location costs nothing until its issue is kept.
type loc struct {
	toks     []string
	child    string
	hasChild bool
}

// at a location: the location of a member of the value at toks.
func at(toks []string, child string) loc { return loc{toks: toks, child: child, hasChild: true} }

func (l loc) len() int {
	if l.hasChild {
		return len(l.toks) + 1
	}
	return len(l.toks)
}

func (l loc) token(i int) string {
	if i == len(l.toks) {
		return l.child
	}
	return l.toks[i]
}

// tokens is the location as a slice of its own.
func (l loc) tokens() []string {
	if !l.hasChild {
		return l.toks
	}
	return childTokens(l.toks, l.child)
}

// compareLocs orders locations as comparePointers orders their pointers.
func compareLocs(a, b loc) int {
	n, m := a.len(), b.len()
	for i := range min(n, m) {
		if d := compareTokens(a.token(i), b.token(i)); d != 0 {
			return d
		}
	}
	return n - m
}

// compareTokens orders two unescaped pointer tokens as comparePointers orders them escaped:
// array indexes in numeric order and before names, names by their escaped bytes.
func compareTokens(a, b string) int {
	ia, ib := isIndexToken(a), isIndexToken(b)
	switch {
	case ia && ib:
		if d := len(a) - len(b); d != 0 {
			return d
		}
	case ia:
		return -1
	case ib:
		return 1
	}
	if escapes(a) || escapes(b) {
		return strings.Compare(pointerEscape(a), pointerEscape(b))
	}
	return strings.Compare(a, b)
}

// escapes reports whether a pointer token is written escaped: it holds '~' or '/'.
func escapes(tok string) bool {
	for i := 0; i < len(tok); i++ {
		if tok[i] == '~' || tok[i] == '/' {
			return true
		}
	}
	return false
}

// keep reports whether an issue of code at l may be listed, and counts it when it may not:
// it would come after the issues kept, or it concerns a number set aside (see badNumbers).
// Call it before building the issue, which then costs nothing when it is not kept.
func (c *issueCollector) keep(l loc, code string) bool {
	if len(c.bad) > 0 && code != "invalid_number" {
		if _, bad := slices.BinarySearchFunc(c.bad, l, func(b []string, l loc) int {
			return compareLocs(loc{toks: b}, l)
		}); bad {
			return false
		}
	}
	if c.full {
		if d := compareLocs(l, c.cut); d > 0 || (d == 0 && code > c.cutCode) {
			c.left++
			return false
		}
	}
	return true
}

// add records an issue at toks and the subschema it concerns (nil when unknown).
func (c *issueCollector) add(is remedy.Issue, toks []string, n *schemaNode) {
	*c.slot(toks, n) = is
	c.added()
}

// slot records an empty issue at toks, concerning n, to be filled in before added is called.
func (c *issueCollector) slot(toks []string, n *schemaNode) *remedy.Issue {
	if c.issues == nil {
		// Most refusals name a few issues; one more place holds the marker.
		c.issues, c.where = make([]remedy.Issue, 0, 4), make([]issueWhere, 0, 4)
	}
	c.issues = append(c.issues, remedy.Issue{})
	c.where = append(c.where, issueWhere{toks: toks, node: n})
	return &c.issues[len(c.issues)-1]
}

// added trims the issues once they are many (see trim).
func (c *issueCollector) added() {
	if len(c.issues) >= 2*MaxIssues {
		c.trim()
	}
}

// trim sorts the issues found, merges duplicates, and keeps the MaxIssues first, counting
// those it drops.
func (c *issueCollector) trim() {
	c.sort()
	n := 0
	for i := range c.issues {
		if n > 0 && sameIssue(&c.issues[n-1], &c.where[n-1], &c.issues[i], &c.where[i]) {
			c.where[n-1].dups += 1 + c.where[i].dups
			continue
		}
		c.issues[n], c.where[n] = c.issues[i], c.where[i]
		n++
	}
	clear(c.issues[n:])
	clear(c.where[n:])
	c.issues, c.where = c.issues[:n], c.where[:n]
	if n > MaxIssues {
		for _, w := range c.where[MaxIssues:] {
			c.left += 1 + w.dups
		}
		clear(c.issues[MaxIssues:])
		clear(c.where[MaxIssues:])
		c.issues, c.where = c.issues[:MaxIssues], c.where[:MaxIssues]
		c.cut, c.cutCode, c.full = loc{toks: c.where[MaxIssues-1].toks}, c.issues[MaxIssues-1].Code, true
	}
}

// compareIssues orders issues by location, then code, message and expected value.
func compareIssues(a *remedy.Issue, aw *issueWhere, b *remedy.Issue, bw *issueWhere) int {
	if d := compareLocs(loc{toks: aw.toks}, loc{toks: bw.toks}); d != 0 {
		return d
	}
	if d := strings.Compare(a.Code, b.Code); d != 0 {
		return d
	}
	if d := strings.Compare(a.Message, b.Message); d != 0 {
		return d
	}
	return bytes.Compare(a.Expected, b.Expected)
}

// sort sorts the issues by compareIssues, stably: their positions are sorted, and then each
// issue is moved once (an issue is large to swap).
func (c *issueCollector) sort() {
	const few = 16
	n := len(c.issues)
	if n < 2 {
		return
	}
	var (
		orderBuf [few]int // order[i] is the position of the issue that goes to i
		doneBuf  [few]bool
		order    = orderBuf[:0]
		done     = doneBuf[:0]
	)
	if n > few {
		order, done = make([]int, 0, n), make([]bool, n)
	} else {
		done = doneBuf[:n]
	}
	for i := range n {
		order = append(order, i)
	}
	cmp := func(a, b int) int { return compareIssues(&c.issues[a], &c.where[a], &c.issues[b], &c.where[b]) }
	if n > few {
		slices.SortStableFunc(order, cmp)
	} else {
		for i := 1; i < n; i++ {
			for j := i; j > 0 && cmp(order[j-1], order[j]) > 0; j-- {
				order[j-1], order[j] = order[j], order[j-1]
			}
		}
	}
	// Each cycle of the permutation is walked once, with one issue aside.
	for i := range n {
		if done[i] || order[i] == i {
			continue
		}
		aside, asideWhere := c.issues[i], c.where[i]
		j := i
		for {
			done[j] = true
			k := order[j]
			if k == i {
				c.issues[j], c.where[j] = aside, asideWhere
				break
			}
			c.issues[j], c.where[j] = c.issues[k], c.where[k]
			j = k
		}
	}
}

// sameIssue reports whether two issues say the same about the same place.
func sameIssue(a *remedy.Issue, aw *issueWhere, b *remedy.Issue, bw *issueWhere) bool {
	return a.Code == b.Code && a.Message == b.Message && bytes.Equal(a.Expected, b.Expected) &&
		aw.node == bw.node && slices.Equal(aw.toks, bw.toks)
}

// hasInvalidNumber reports whether v holds a number sanitize would set aside. It allocates
// nothing, so that valid input pays only for a walk.
func hasInvalidNumber(v any) bool {
	switch x := v.(type) {
	case json.Number:
		return !validNumber(string(x))
	case map[string]any:
		for _, e := range x {
			if hasInvalidNumber(e) {
				return true
			}
		}
	case []any:
		for _, e := range x {
			if hasInvalidNumber(e) {
				return true
			}
		}
	}
	return false
}

// sanitize returns v with every number that is too large to validate replaced by null, copying
// only the containers on the way to one, and records where each was. tokens is a stack: each
// call appends to it, and only what is recorded is copied.
func (c *issueCollector) sanitize(v any, tokens []string) (any, bool) {
	switch x := v.(type) {
	case json.Number:
		if !validNumber(string(x)) {
			c.bad = append(c.bad, slices.Clone(tokens))
			return nil, true
		}
	case map[string]any:
		var out map[string]any
		for k, e := range x {
			if ne, changed := c.sanitize(e, append(tokens, k)); changed {
				if out == nil {
					out = maps.Clone(x)
				}
				out[k] = ne
			}
		}
		if out != nil {
			return out, true
		}
	case []any:
		var out []any
		for i, e := range x {
			if ne, changed := c.sanitize(e, append(tokens, strconv.Itoa(i))); changed {
				if out == nil {
					out = slices.Clone(x)
				}
				out[i] = ne
			}
		}
		if out != nil {
			return out, true
		}
	}
	return v, false
}

// validNumber reports whether s is a JSON number small enough to validate.
func validNumber(s string) bool {
	if len(s) == 0 || len(s) > validNumberMaxLen || !jsonscan.IsNumber(s) {
		return false
	}
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		exp := strings.TrimLeft(s[i+1:], "+-")
		exp = strings.TrimLeft(exp, "0")
		if len(exp) > 4 {
			return false
		}
		if n, _ := strconv.Atoi(exp); exp != "" && n > validNumberMaxExp { // "" fails, allocating an error
			return false
		}
	}
	return true
}

// badNumbers reports the numbers sanitize set aside, in place of whatever the validator said
// about the null that stood in for them (keep left that out).
func (c *issueCollector) badNumbers() {
	for _, toks := range c.bad {
		if !c.keep(loc{toks: toks}, "invalid_number") {
			continue
		}
		val, _ := lookupInstance(c.instance, toks)
		c.add(remedy.Issue{
			Code: "invalid_number",
			Message: fmt.Sprintf("%s must be a number of at most %d characters, with an exponent of at most %d",
				issueLabel(toks), validNumberMaxLen, validNumberMaxExp),
			Received: issueReceived(val),
		}, toks, c.v.locate(toks))
	}
}

// locate finds the subschema that applies at an instance location, following properties,
// additionalProperties and items.
func (v *validator) locate(tokens []string) *schemaNode {
	n := v.byPtr[""]
	for _, tok := range tokens {
		next := v.byPtr[n.ptr+"/properties/"+pointerEscape(tok)]
		if next == nil && isIndexToken(tok) {
			next = v.byPtr[n.ptr+"/items"]
		}
		if next == nil {
			next = v.byPtr[n.ptr+"/additionalProperties"]
		}
		if next == nil {
			return n
		}
		n = next
	}
	return n
}

// isIndexToken reports whether a pointer token is an array index: digits without a leading zero.
func isIndexToken(s string) bool {
	if s == "" || (s[0] == '0' && len(s) > 1) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// childTokens is tokens followed by tok, in a slice of its own.
func childTokens(tokens []string, tok string) []string {
	return append(tokens[:len(tokens):len(tokens)], tok)
}

// lookupInstance returns the value at tokens within v.
func lookupInstance(v any, tokens []string) (any, bool) {
	for _, tok := range tokens {
		switch x := v.(type) {
		case map[string]any:
			e, ok := x[tok]
			if !ok {
				return nil, false
			}
			v = e
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(x) {
				return nil, false
			}
			v = x[i]
		default:
			return nil, false
		}
	}
	return v, true
}

// issueReceived encodes what arrived, compact and without HTML escaping, as encoding/json
// would (object members sorted by name); nil when it is larger than issueMaxReceived or not
// JSON. It gives up as soon as the encoding outgrows the bound, so that a large value costs no
// more than a small one.
func issueReceived(v any) json.RawMessage {
	switch x := v.(type) {
	case nil:
		return json.RawMessage("null")
	case bool:
		return json.RawMessage(strconv.FormatBool(x))
	case json.Number:
		if len(x) <= issueMaxReceived && jsonscan.IsNumber(string(x)) && finite(x) {
			return json.RawMessage(x)
		}
		return nil
	case string:
		if len(x) <= issueMaxReceived-2 && jsonPlainString(x) {
			return json.RawMessage(`"` + x + `"`)
		}
	}
	b, ok := appendReceived(nil, v, 0)
	if !ok || len(b) > issueMaxReceived {
		return nil
	}
	return b
}

// appendReceived appends v to b as issueReceived encodes it; ok is false when v is not JSON,
// holds a number a double does not, is nested deeper than 32, or b has outgrown
// issueMaxReceived.
func appendReceived(b []byte, v any, depth int) (_ []byte, ok bool) {
	if len(b) > issueMaxReceived || depth > 32 {
		return b, false
	}
	switch x := v.(type) {
	case nil:
		return append(b, "null"...), true
	case bool:
		return strconv.AppendBool(b, x), true
	case json.Number:
		if len(x) > issueMaxReceived || !jsonscan.IsNumber(string(x)) || !finite(x) {
			return b, false
		}
		return append(b, x...), true
	case string:
		if len(x) > issueMaxReceived {
			return b, false
		}
		if jsonPlainString(x) {
			return append(append(append(b, '"'), x...), '"'), true
		}
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if enc.Encode(x) != nil {
			return b, false
		}
		return append(b, bytes.TrimSuffix(buf.Bytes(), []byte("\n"))...), true
	case []any:
		if len(x) > issueMaxReceived/2 { // "0," at least for each
			return b, false
		}
		b = append(b, '[')
		for i, e := range x {
			if i > 0 {
				b = append(b, ',')
			}
			if b, ok = appendReceived(b, e, depth+1); !ok {
				return b, false
			}
		}
		return append(b, ']'), true
	case map[string]any:
		if len(x) > issueMaxReceived/5 { // `"":0,` at least for each
			return b, false
		}
		b = append(b, '{')
		for i, k := range slices.Sorted(maps.Keys(x)) {
			if i > 0 {
				b = append(b, ',')
			}
			if b, ok = appendReceived(b, k, depth+1); !ok {
				return b, false
			}
			b = append(b, ':')
			if b, ok = appendReceived(b, x[k], depth+1); !ok {
				return b, false
			}
		}
		return append(b, '}'), true
	}
	return b, false
}

// finite reports whether a number is one a double holds: 1e400 is valid JSON, but a client
// decoding the envelope into float64 (as encoding/json and the MCP SDK do) fails on it, and
// would lose the whole envelope for one echoed value.
func finite(n json.Number) bool {
	_, err := strconv.ParseFloat(string(n), 64)
	return err == nil
}

// jsonPlainString reports whether s is written in JSON as it is, between quotes.
func jsonPlainString(s string) bool {
	return jsonscan.SkipPlain(s, 0) == len(s)
}

// visit turns a validation error tree into issues: groups and references are looked through,
// every other error is one issue (anyOf and oneOf too: their branches' complaints contradict
// each other).
func (c *issueCollector) visit(e *jsv.ValidationError) {
	switch e.ErrorKind.(type) {
	case *kind.Schema, *kind.Group, *kind.Reference, *kind.AllOf:
		for _, cause := range e.Causes {
			c.visit(cause)
		}
		return
	}
	c.leaf(e)
}

// leaf makes the issues of one violated keyword.
func (c *issueCollector) leaf(e *jsv.ValidationError) {
	toks, at, past := c.origin(e.InstanceLocation)
	if past {
		return
	}
	if at != nil && containerKeyword(e.ErrorKind) {
		return // checked on the container itself, see regenerate
	}
	c.fault(c.v.byLoc[e.SchemaURL], toks, e.ErrorKind, nil, nil)
}

// fault makes the issues of the keyword k of the subschema n (nil when unknown) that the value
// at toks violates. val is that value, or nil to look it up in the instance; vals are, for
// additionalProperties, the values of the members it names (nil: looked up too). The value is
// read only once the issue is known to be kept.
func (c *issueCollector) fault(n *schemaNode, toks []string, k jsv.ErrorKind, known *any, vals []any) {
	kw := schemaissue.Keyword(k)
	switch k := k.(type) {
	case *kind.Required:
		for _, m := range k.Missing {
			c.missing(n, toks, m, "required", "")
		}
		return
	case *kind.DependentRequired:
		for _, m := range k.Missing {
			c.missing(n, toks, m, "dependent_required", k.Prop)
		}
		return
	case *kind.Dependency:
		for _, m := range k.Missing {
			c.missing(n, toks, m, "dependencies", k.Prop)
		}
		return
	case *kind.AdditionalProperties:
		c.additional(n, toks, k.Properties, vals, c.fragment(n, kw))
		return
	}
	code := schemaissue.Code(k, kw)
	if !c.keep(loc{toks: toks}, code) {
		return
	}
	var lbuf [issueMaxEcho + 64]byte
	name := appendLabel(lbuf[:0], toks) // each message starts with it
	var val any
	if known != nil {
		val = *known
	} else {
		val, _ = lookupInstance(c.instance, toks)
	}
	// The issue is built in its place in the list: an issue is large, and copying it in
	// cost a tenth of building it.
	is := c.slot(toks, n)
	is.Code, is.Expected, is.Received = code, c.fragment(n, kw), issueReceived(val)
	switch k := k.(type) {
	case *kind.Type:
		want := slices.DeleteFunc(slices.Clone(k.Want), func(t string) bool { return t == "null" })
		nullable := len(want) < len(k.Want)
		switch len(want) {
		case 0:
			is.Expected = json.RawMessage(`"null"`)
		case 1:
			is.Expected = jsonAppendString(nil, want[0])
		default:
			is.Expected, _ = json.Marshal(want)
		}
		var names []string
		for _, t := range want {
			names = append(names, issueArticle(t))
		}
		if nullable {
			names = append(names, "null")
		}
		got := issueArticle(k.Got)
		if num, ok := val.(json.Number); ok && k.Got == "number" && slices.Contains(want, "integer") {
			got = string(num)
		}
		is.Message = c.say(name, " must be ", strings.Join(names, " or "), ", not ", got)
		if len(want) == 1 {
			if s, ok := issueCoerce(val, want[0]); ok {
				is.SuggestedValue = c.check(n, s)
			}
		}
	case *kind.Enum:
		is.Expected = nil
		is.AllowedValues = schemaEnum(n)
		is.Message = c.say(name, " must be one of ", n.enumText())
		is.SuggestedValue = c.check(n, n.closestEnum(val))
	case *kind.Const:
		is.Expected = nil
		list := ""
		if n != nil && n.get("const") != nil {
			is.AllowedValues = []json.RawMessage{n.get("const")}
			is.SuggestedValue = c.check(n, n.get("const"))
			list = issueValueList(is.AllowedValues)
		}
		is.Message = c.say(name, " must be ", list)
	case *kind.Minimum:
		is.Message = c.say(name, " must be at least ", c.bound(n, kw, k.Want))
	case *kind.Maximum:
		is.Message = c.say(name, " must be at most ", c.bound(n, kw, k.Want))
	case *kind.ExclusiveMinimum:
		is.Message = c.say(name, " must be greater than ", c.bound(n, kw, k.Want))
	case *kind.ExclusiveMaximum:
		is.Message = c.say(name, " must be less than ", c.bound(n, kw, k.Want))
	case *kind.MultipleOf:
		is.Message = c.say(name, " must be a multiple of ", c.bound(n, kw, k.Want))
	case *kind.MinLength:
		is.Message = c.say(name, " must be at least ", issuePlural(k.Want, "character"), " long")
	case *kind.MaxLength:
		is.Message = c.say(name, " must be at most ", issuePlural(k.Want, "character"), " long")
	case *kind.Pattern:
		is.Message = c.say(name, " must match the pattern ", k.Want)
	case *kind.Format:
		is.Message = c.say(name, " must be ", issueFormatText(k.Want))
	case *kind.MinItems:
		is.Message = c.say(name, " must contain at least ", issuePlural(k.Want, "item"))
	case *kind.MaxItems:
		is.Message = c.say(name, " must contain at most ", issuePlural(k.Want, "item"))
	case *kind.UniqueItems:
		is.Message = c.say(name, " must not contain duplicates (items ", strconv.Itoa(k.Duplicates[0]), " and ",
			strconv.Itoa(k.Duplicates[1]), " are equal)")
	case *kind.MinProperties:
		is.Message = c.say(name, " must have at least ", issuePlural(k.Want, "property"))
	case *kind.MaxProperties:
		is.Message = c.say(name, " must have at most ", issuePlural(k.Want, "property"))
	case *kind.PropertyNames:
		is.Message = c.say(name, " has a property name that is not allowed: ", clip(k.Property))
	case *kind.Contains:
		is.Message = c.say(name, " must contain an item that matches its contains schema")
	case *kind.MinContains:
		is.Message = c.say(name, " must contain at least ", issuePlural(k.Want, "item"), " matching its contains schema")
	case *kind.MaxContains:
		is.Message = c.say(name, " must contain at most ", issuePlural(k.Want, "item"), " matching its contains schema")
	case *kind.ContentEncoding:
		is.Message = c.say(name, " must be ", k.Want, "-encoded")
	case *kind.ContentMediaType:
		is.Message = c.say(name, " must hold ", k.Want)
	case *kind.FalseSchema:
		is.Message = c.say(name, " is not allowed")
	case *kind.Not:
		is.Expected = c.fragment(n, "not")
		is.Message = c.say(name, " must not match the schema under not")
	case *kind.AnyOf:
		is.Message = c.say(name, " must match at least one of the schemas under anyOf")
	case *kind.OneOf:
		if len(k.Subschemas) > 1 {
			is.Message = c.say(name, " must match exactly one of the schemas under oneOf, not ",
				strconv.Itoa(k.Subschemas[0]), " and ", strconv.Itoa(k.Subschemas[1]))
		} else {
			is.Message = c.say(name, " must match exactly one of the schemas under oneOf")
		}
	case *kind.InvalidJsonValue:
		is.Message = c.say(name, " holds a value that is not JSON")
	case *kind.RefCycle:
		is.Message = c.say(name, " meets a cycle of references in the schema")
	default:
		is.Message = c.say(name, " violates ", cmp.Or(kw, "the schema"))
	}
	c.added()
}

// say is a message: the label of a field, then the parts, written in the collector's text
// blocks (see textArena).
func (c *issueCollector) say(label []byte, parts ...string) string {
	n := len(label)
	for _, p := range parts {
		n += len(p)
	}
	a := &c.text
	start := a.grow(n)
	a.block = append(a.block, label...)
	for _, p := range parts {
		a.block = append(a.block, p...)
	}
	return a.string(start)
}

// textArena makes strings in blocks of its own, so that the messages of a refusal cost one
// allocation rather than one each. A block is only ever appended to, and a string made from
// it covers bytes that are never written again (a full block is left as it is, for a new
// one): its strings are as immutable as any, as strings.Builder's is.
type textArena struct{ block []byte }

// textBlock is the size of a block, which holds the messages of a few issues.
const textBlock = 256

// grow makes room for n more bytes and returns where they start.
func (a *textArena) grow(n int) int {
	if cap(a.block)-len(a.block) < n {
		a.block = make([]byte, 0, max(n, textBlock))
	}
	return len(a.block)
}

// string is the text written since start.
func (a *textArena) string(start int) string {
	b := a.block[start:]
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(unsafe.SliceData(b), len(b))
}

// additional adds the issues of the members names of the object at toks that its schema n
// does not allow (expected is n's additionalProperties as a fragment): one per member, or one
// for them all when there are more than issueMaxListed.
func (c *issueCollector) additional(n *schemaNode, toks []string, names []string, vals []any, expected json.RawMessage) {
	const code = "additional_properties"
	allowed := ""
	if n != nil && n.get("patternProperties") == nil {
		var props []string
		for _, m := range n.sub["properties"] {
			props = append(props, clip(m.key))
		}
		allowed = " (allowed: " + issueList(props, len(props)) + ")"
		if len(props) == 0 {
			allowed = " (no property is allowed here)"
		}
	}
	if len(names) <= issueMaxListed {
		var lbuf [issueMaxEcho + 64]byte
		for i, p := range names {
			if !c.keep(at(toks, p), code) {
				continue
			}
			ptoks := childTokens(toks, p)
			var pv any
			if vals != nil {
				pv = vals[i]
			} else {
				pv, _ = lookupInstance(c.instance, ptoks)
			}
			c.add(remedy.Issue{
				Code:     code,
				Message:  c.say(appendLabel(lbuf[:0], ptoks), " is not an allowed property", allowed),
				Expected: expected,
				Received: issueReceived(pv),
			}, ptoks, n)
		}
		return
	}
	if !c.keep(loc{toks: toks}, code) {
		return
	}
	// The first names in path order, whatever order the validator found them in.
	var first [issueMaxListed]string
	k := 0
	for _, p := range names {
		if k == len(first) && compareTokens(p, first[k-1]) >= 0 {
			continue
		}
		i := min(k, len(first)-1)
		for i > 0 && compareTokens(p, first[i-1]) < 0 {
			first[i] = first[i-1]
			i--
		}
		first[i] = p
		k = min(k+1, len(first))
	}
	quoted := make([]string, k)
	for i, p := range first[:k] {
		quoted[i] = issueQuote(clip(p))
	}
	c.add(remedy.Issue{
		Code: code,
		Message: fmt.Sprintf("%s has %d properties that are not allowed: %s%s", issueLabel(toks), len(names),
			issueList(quoted, len(names)), allowed),
		Expected: expected,
	}, toks, n)
}

// issueQuote quotes a name for a message with the first of ' " ` it does not hold, so that a
// client reading the names back (as the reference rewriter does) finds its ends.
func issueQuote(s string) string {
	for _, q := range []string{"'", `"`, "`"} {
		if !strings.Contains(s, q) {
			return q + s + q
		}
	}
	return "'" + s + "'"
}

// missing adds the issue of a missing property m of the object at toks, whose schema is n;
// the presence of the property dep (when not empty) is what requires it.
func (c *issueCollector) missing(n *schemaNode, toks []string, m, code, dep string) {
	if !c.keep(at(toks, m), code) {
		return
	}
	mtoks := childTokens(toks, m)
	var lbuf [issueMaxEcho + 64]byte
	is := remedy.Issue{Code: code}
	if dep == "" {
		is.Message = c.say(appendLabel(lbuf[:0], mtoks), " is required")
	} else {
		is.Message = c.say(appendLabel(lbuf[:0], mtoks), " is required when ", issueLabel(childTokens(toks, dep)), " is present")
	}
	node := n
	if n != nil {
		if p := c.v.byPtr[n.ptr+"/properties/"+pointerEscape(m)]; p != nil {
			node = p
			is.Expected = p.raw
			switch {
			case p.get("default") != nil:
				is.SuggestedValue = c.check(p, p.get("default"))
			case p.get("const") != nil:
				is.SuggestedValue = c.check(p, p.get("const"))
			default:
				if e := schemaEnum(p); len(e) == 1 {
					is.SuggestedValue = c.check(p, e[0])
				}
			}
		}
	}
	c.add(is, mtoks, node)
}

// fragment is {kw: value} of n's keyword kw, nil when n does not have it.
// It is shared by the issues that quote it, and full, so that appending to it copies it.
func (c *issueCollector) fragment(n *schemaNode, kw string) json.RawMessage {
	if n == nil || kw == "" {
		return nil
	}
	for i, m := range n.members {
		if m.key == kw {
			return n.frags[i]
		}
	}
	return nil
}

// bound is the text of n's bound kw as the schema writes it.
func (c *issueCollector) bound(n *schemaNode, kw string, want *big.Rat) string {
	if n != nil {
		for i, m := range n.members {
			if m.key == kw {
				return n.texts[i]
			}
		}
	}
	if want == nil {
		return "its bound"
	}
	return want.RatString()
}

// check returns raw when it satisfies n's whole subschema, else nil: a suggestion that would
// only earn another refusal is no suggestion.
func (c *issueCollector) check(n *schemaNode, raw json.RawMessage) json.RawMessage {
	if n == nil || n.sch == nil || len(raw) == 0 {
		return nil
	}
	if n.fast != nil && n.fast.acceptsText(string(raw), 0, false) {
		return raw
	}
	v, err := decodeInstance(raw)
	if err != nil {
		return nil
	}
	if s, ok := v.(json.Number); ok && !validNumber(string(s)) {
		return nil
	}
	if n.sch.Validate(v) != nil {
		return nil
	}
	return raw
}

// schemaEnum are n's enum members as the schema writes them.
func schemaEnum(n *schemaNode) []json.RawMessage {
	if n == nil || n.enum == nil {
		return nil
	}
	return slices.Clone(n.enum) // the issue's own list: whoever edits it edits no other
}

// enumText is n's enum as a message lists it.
func (n *schemaNode) enumText() string {
	if n == nil {
		return issueValueList(nil)
	}
	return n.enumList
}

// closestEnum is the member of n's enum an agent obviously meant: the only one, or the only one
// a string equals once case and surrounding white space are ignored.
func (n *schemaNode) closestEnum(val any) json.RawMessage {
	if n == nil || len(n.enum) == 0 {
		return nil
	}
	if len(n.enum) == 1 {
		return n.enum[0]
	}
	s, ok := val.(string)
	if !ok {
		return nil
	}
	norm := strings.ToLower(strings.TrimSpace(s))
	var match json.RawMessage
	for i, a := range n.enum {
		if n.enumStr[i] && n.enumNorm[i] == norm {
			if match != nil {
				return nil // ambiguous
			}
			match = a
		}
	}
	return match
}

// issueCoerce is val as JSON of type want, when the conversion is the obvious one.
func issueCoerce(val any, want string) (json.RawMessage, bool) {
	switch want {
	case "integer", "number":
		if s, ok := val.(string); ok {
			s = strings.TrimSpace(s)
			// "12.00" for an integer is not offered as 12.00: a fraction written out for a
			// whole number suggests another unit (euros for cents), which only the caller knows.
			if jsonscan.IsNumber(s) && (want == "number" || !strings.ContainsAny(s, ".eE")) {
				return json.RawMessage(s), true
			}
		}
	case "boolean":
		if s, ok := val.(string); ok {
			switch strings.ToLower(strings.TrimSpace(s)) {
			case "true":
				return json.RawMessage("true"), true
			case "false":
				return json.RawMessage("false"), true
			}
		}
	case "string":
		switch x := val.(type) {
		case json.Number:
			return jsonAppendString(nil, string(x)), true
		case bool:
			return jsonAppendString(nil, strconv.FormatBool(x)), true
		}
	case "array":
		if val != nil {
			if _, isArr := val.([]any); !isArr {
				if r := issueReceived(val); r != nil {
					return append(append([]byte{'['}, r...), ']'), true
				}
			}
		}
	}
	return nil, false
}

// issueLabel names a field for a message: items[2].quantity; the input itself when tokens is
// empty. A label longer than issueMaxEcho bytes is cut (see clipBytes).
func issueLabel(tokens []string) string {
	var buf [issueMaxEcho + 64]byte
	return string(appendLabel(buf[:0], tokens))
}

// appendLabel appends issueLabel(tokens) to b.
func appendLabel(b []byte, tokens []string) []byte {
	if len(tokens) == 0 {
		return append(b, "the input"...)
	}
	start := len(b)
	for i, t := range tokens {
		if len(b)-start > issueMaxEcho {
			break
		}
		t = t[:min(len(t), issueMaxEcho+1)] // what is past the bound is cut anyway
		switch {
		case isIndexToken(t) && i > 0:
			b = append(append(append(b, '['), t...), ']')
		case i > 0:
			b = append(append(b, '.'), t...)
		default:
			b = append(b, t...)
		}
	}
	return clipAppend(b, start, false)
}

// issuePointer is the JSON Pointer of tokens, cut when longer than issueMaxEcho bytes (see
// clipBytes): a pointer cut so resolves to nothing, rather than to another member.
func issuePointer(tokens []string) string {
	if len(tokens) == 0 {
		return ""
	}
	var buf [issueMaxEcho + 64]byte
	return string(appendPointer(buf[:0], tokens))
}

// appendPointer appends issuePointer(tokens) to b.
func appendPointer(b []byte, tokens []string) []byte {
	start := len(b)
	for _, t := range tokens {
		if len(b)-start > issueMaxEcho {
			break
		}
		b = append(b, '/')
		t = t[:min(len(t), issueMaxEcho+1)]
		if strings.ContainsAny(t, "~/") {
			t = pointerEscape(t)
		}
		b = append(b, t...)
	}
	return clipAppend(b, start, true)
}

// clip is s, or its start and an ellipsis when it is longer than issueMaxEcho bytes.
func clip(s string) string {
	if len(s) <= issueMaxEcho {
		return s
	}
	return clipBytes([]byte(s[:issueMaxEcho+1]), false)
}

// clipBytes is b as a string, or, when b is longer than issueMaxEcho bytes, as much of its
// start as fits with an ellipsis (…) after it: cut between characters, and, in a pointer,
// never inside an escape (~0, ~1).
func clipBytes(b []byte, pointer bool) string {
	return string(clipAppend(b, 0, pointer))
}

// clipAppend cuts b[start:] as clipBytes does, in place.
func clipAppend(b []byte, start int, pointer bool) []byte {
	if len(b)-start <= issueMaxEcho {
		return b
	}
	const ellipsis = "…"
	i := issueMaxEcho - len(ellipsis)
	s := b[start:]
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	if pointer && i > 0 && s[i-1] == '~' {
		i--
	}
	return append(b[:start+i], ellipsis...)
}

// issueArticle names a JSON type with its article: an integer, a string, null.
func issueArticle(t string) string {
	switch t {
	case "integer", "object", "array":
		return "an " + t
	case "null":
		return "null"
	case "":
		return "a value"
	}
	return "a " + t
}

// issuePlural writes a count of a noun: 1 item, 2 items, 3 properties.
func issuePlural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	if strings.HasSuffix(noun, "y") {
		return strconv.Itoa(n) + " " + noun[:len(noun)-1] + "ies"
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

// issueFormatText says what a format asks for.
func issueFormatText(f string) string {
	switch f {
	case "email":
		return "a valid email address"
	case "date-time":
		return "an RFC 3339 date-time (2006-01-02T15:04:05Z)"
	case "date":
		return "an RFC 3339 date (2006-01-02)"
	case "time":
		return "an RFC 3339 time (15:04:05Z)"
	case "uri", "iri":
		return "an absolute URI"
	case "uri-reference", "iri-reference":
		return "a URI reference"
	case "uuid":
		return "a UUID"
	case "ipv4":
		return "an IPv4 address"
	case "ipv6":
		return "an IPv6 address"
	case "hostname":
		return "a hostname"
	case "duration":
		return "an ISO 8601 duration (P1DT2H)"
	case "regex":
		return "a regular expression"
	}
	return "in format " + f
}

// schemaString is the value of a string of the schema (valid JSON); ok is false for a value
// of another type. Most hold no escape and are read in place.
func schemaString(raw json.RawMessage) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' {
		return "", false
	}
	if body := raw[1 : len(raw)-1]; bytes.IndexByte(body, '\\') < 0 {
		return string(body), true
	}
	var s string
	return s, json.Unmarshal(raw, &s) == nil
}

// issueValueList writes enum values for a message: strings bare when that is unambiguous, JSON
// otherwise; at most issueMaxListed of them.
func issueValueList(vals []json.RawMessage) string {
	names := make([]string, len(vals))
	for i, v := range vals {
		if s, ok := schemaString(v); ok && s != "" && !strings.ContainsAny(s, " ,\"'`\t\n\r") {
			names[i] = s
		} else {
			names[i] = string(v)
		}
	}
	return issueList(names, len(names))
}

// issueList joins names for a message, at most issueMaxListed of them, saying how many of
// total were left out.
func issueList(names []string, total int) string {
	shown := names[:min(len(names), issueMaxListed)]
	s := strings.Join(shown, ", ")
	if total > len(shown) {
		s += fmt.Sprintf(" and %d more", total-len(shown))
	}
	return s
}

// finish sorts and deduplicates the issues, keeps the first MaxIssues and counts the others
// in one more issue, and cuts the schema excerpt the issues kept concern.
func (c *issueCollector) finish() ([]remedy.Issue, json.RawMessage, int, bool) {
	c.trim()
	issues := c.issues
	var pbuf [16]string
	ptrs := pbuf[:0]
	// The pointers of a few issues are written into one string, which they share.
	var (
		text [512]byte
		ends [16]int
	)
	few := len(issues) <= len(ends)
	all := text[:0]
	for i, w := range c.where {
		if few {
			all = appendPointer(all, w.toks)
			ends[i] = len(all)
		} else {
			issues[i].Path = issuePointer(w.toks)
		}
		if w.node != nil {
			ptrs = append(ptrs, w.node.ptr)
		}
	}
	if few && len(all) > 0 {
		joined, start := string(all), 0
		for i := range issues {
			issues[i].Path, start = joined[start:ends[i]], ends[i]
		}
	}
	atLeast := c.lossy && c.left > 0
	kept := len(issues)
	if c.left > 0 {
		issues = append(issues, tooManyIssues(c.left, atLeast))
	}
	return issues, c.v.excerpt(ptrs), kept + c.left, atLeast
}

// tooManyIssues is the issue that ends a list of MaxIssues issues, counting the left ones, or
// saying that there are at least that many.
func tooManyIssues(left int, atLeast bool) remedy.Issue {
	more := issuePlural(left, "more issue")
	if atLeast {
		more = "at least " + more
	}
	return remedy.Issue{Code: TooManyIssues, Message: fmt.Sprintf(
		"%s found and not listed: only the first %d are; repair those and send the call again to learn the rest",
		more, MaxIssues)}
}

// capIssues bounds the issues of an envelope a handler made as validation bounds its own: the
// first MaxIssues, then one TooManyIssues issue counting the others. env.Issues is replaced,
// never modified, since it may be the handler's.
func capIssues(env *remedy.Envelope) {
	n := len(env.Issues)
	if n <= MaxIssues || n == MaxIssues+1 && env.Issues[MaxIssues].Code == TooManyIssues {
		return
	}
	env.Issues = append(env.Issues[:MaxIssues:MaxIssues], tooManyIssues(n-MaxIssues, false))
}

// comparePointers orders JSON Pointers segment by segment: a parent before its members, array
// indexes in numeric order and before names, names by their bytes.
func comparePointers(a, b string) int {
	for a != b {
		if a == "" {
			return -1
		}
		if b == "" {
			return 1
		}
		sa, ra := pointerFirst(a)
		sb, rb := pointerFirst(b)
		ia, ib := isIndexToken(sa), isIndexToken(sb)
		switch {
		case ia && ib:
			if d := len(sa) - len(sb); d != 0 {
				return d
			}
		case ia:
			return -1
		case ib:
			return 1
		}
		if d := strings.Compare(sa, sb); d != 0 {
			return d
		}
		a, b = ra, rb
	}
	return 0
}

// pointerFirst splits "/a/b" into "a" and "/b".
func pointerFirst(p string) (string, string) {
	p = p[1:]
	if i := strings.IndexByte(p, '/'); i >= 0 {
		return p[:i], p[i:]
	}
	return p, ""
}

// excerpt is the schema the envelope inlines for issues concerning the subschemas at ptrs
// (which it sorts and compacts in place).
func (v *validator) excerpt(ptrs []string) json.RawMessage {
	slices.Sort(ptrs)
	ptrs = slices.Compact(ptrs)
	// A subschema that holds another stands for both.
	ptrs = slices.DeleteFunc(ptrs, func(p string) bool {
		for _, q := range ptrs {
			if q != p && (q == "" || len(p) > len(q) && p[len(q)] == '/' && strings.HasPrefix(p, q)) {
				return true
			}
		}
		return false
	})
	root := v.byPtr[""]
	switch len(ptrs) {
	case 0:
		return root.raw
	case 1:
		return v.byPtr[ptrs[0]].raw
	}
	var kbuf [256]byte
	kb := kbuf[:0] // each pointer with its length before it, for names may hold any character
	for _, p := range ptrs {
		kb = append(strconv.AppendInt(kb, int64(len(p)), 10), ':')
		kb = append(kb, p...)
	}
	cache := v.excerpts.Load()
	if cache != nil {
		if x, ok := (*cache)[string(kb)]; ok {
			return x
		}
	}
	paths := make([][]string, len(ptrs))
	for i, p := range ptrs {
		paths[i] = strings.Split(p[1:], "/")
	}
	x := json.RawMessage(v.prune(nil, root, paths))
	x = x[:len(x):len(x)] // shared by the envelopes that inline it: appending copies it
	if cache == nil || len(*cache) < maxExcerpts {
		v.excerptMu.Lock()
		defer v.excerptMu.Unlock()
		cache = v.excerpts.Load()
		if cache == nil || len(*cache) < maxExcerpts {
			next := make(map[string]json.RawMessage, 1+len(maybe(cache)))
			for k, e := range maybe(cache) {
				next[k] = e
			}
			if had, ok := next[string(kb)]; ok {
				return had // another request cut it meanwhile
			}
			next[string(kb)] = x
			v.excerpts.Store(&next)
		}
	}
	return x
}

// maybe is the map m points to, nil for none.
func maybe(m *map[string]json.RawMessage) map[string]json.RawMessage {
	if m == nil {
		return nil
	}
	return *m
}

// prune appends n cut down to the paths (escaped pointer tokens below n) leading to the
// subschemas kept whole.
func (v *validator) prune(b []byte, n *schemaNode, paths [][]string) []byte {
	for _, p := range paths {
		if len(p) == 0 {
			return append(b, n.raw...)
		}
	}
	under := func(key string) [][]string {
		var out [][]string
		for _, p := range paths {
			if p[0] == key {
				out = append(out, p[1:])
			}
		}
		return out
	}
	var out []schemaMember
	kept := map[string]bool{} // property names kept, unescaped
	for _, m := range n.members {
		sub := under(m.key)
		switch {
		case m.key == "type":
			out = append(out, m)
		case len(sub) == 0:
		case slices.Contains(schemaMapKeywords, m.key):
			var members []schemaMember
			for _, s := range n.sub[m.key] {
				tok := pointerEscape(s.key)
				var rest [][]string
				for _, p := range sub {
					if len(p) > 0 && p[0] == tok {
						rest = append(rest, p[1:])
					}
				}
				if rest == nil {
					continue
				}
				val := s.val
				if child := v.byPtr[n.ptr+"/"+m.key+"/"+tok]; child != nil {
					val = v.prune(nil, child, rest)
				}
				members = append(members, schemaMember{s.key, val})
				if m.key == "properties" {
					kept[s.key] = true
				}
			}
			out = append(out, schemaMember{m.key, schemaWriteMembers(nil, members)})
		case slices.Contains(schemaOneKeywords, m.key) && v.byPtr[n.ptr+"/"+m.key] != nil:
			out = append(out, schemaMember{m.key, v.prune(nil, v.byPtr[n.ptr+"/"+m.key], sub)})
		default:
			out = append(out, m) // a list of subschemas is kept whole
		}
	}
	if req := n.get("required"); req != nil && len(kept) > 0 {
		var names, cut []string
		if json.Unmarshal(req, &names) == nil {
			for _, name := range names {
				if kept[name] {
					cut = append(cut, name)
				}
			}
		}
		if len(cut) > 0 {
			raw, _ := json.Marshal(cut)
			// required goes right after properties, where the schema has it or not.
			i := slices.IndexFunc(out, func(m schemaMember) bool { return m.key == "properties" })
			out = slices.Insert(out, i+1, schemaMember{"required", raw})
		}
	}
	return schemaWriteMembers(b, out)
}

// Pruning: the validator builds an error for every value it refuses, so an instance with half
// a million invalid values would cost hundreds of megabytes to learn its first MaxIssues
// issues. Before a large instance is validated, it is pruned: containers whose schemas are
// simple enough (below) are walked in path order, their values checked one by one (by the fast
// check, else by the library), and once enough issues are known, what comes after them is left
// out. Values known to be valid are left out too. The library then validates the pruned
// instance (the stand-in), and what it says is mapped back to the instance's locations.
//
// The issues listed are the same, because issues are listed in path order: a value past the
// cut comes after at least MaxIssues+1 issues, so none of its issues is among the first
// MaxIssues. The keywords of a container that its pruning changes (minItems, maxItems,
// uniqueItems, minProperties, maxProperties) are checked on the container itself instead. What
// is left out is not counted: the total is then a lower bound, and the marker says "at least".

// pruneFrom is the fewest values an instance must hold to be pruned before validation: smaller
// ones cost the library little, and are validated as they are.
const pruneFrom = 400

// pruneCheckMax is the most values a container the pruning does not look into may hold for the
// library to check it on its own (to learn whether it is valid): a larger one is left whole.
const pruneCheckMax = 1000

// standIn records how a pruned value stands in for the instance's: which elements of an array
// were kept, which members or elements were pruned in turn, and whether it stands for a value
// past the cut.
type standIn struct {
	orig  any           // the value it stands for
	set   []*jsv.Schema // the schemas whose container keywords are checked on orig
	index []int         // for an array, the instance's index of each element kept
	kids  map[string]*standIn
	past  bool // what the validator says of it is dropped: it comes after the issues listed
}

// pruner prunes one instance.
type pruner struct {
	v     *validator
	lossy bool // something that may hold issues was left out
}

// largeValue reports whether v holds more than limit values.
func largeValue(v any, limit int) bool {
	n := 0
	var walk func(v any) bool
	walk = func(v any) bool {
		n++
		if n > limit {
			return true
		}
		switch x := v.(type) {
		case []any:
			for _, e := range x {
				if walk(e) {
					return true
				}
			}
		case map[string]any:
			for _, e := range x {
				if walk(e) {
					return true
				}
			}
		}
		return false
	}
	return walk(v)
}

// expand adds the targets of the schemas' $ref to set and drops true schemas; ok is false when
// the references go round or too deep.
func expand(set []*jsv.Schema) (_ []*jsv.Schema, ok bool) {
	plain := true
	for _, s := range set {
		if s.Ref != nil || (s.Bool != nil && *s.Bool) {
			plain = false
			break
		}
	}
	if plain {
		return set, true
	}
	out := make([]*jsv.Schema, 0, len(set)+1)
	for _, s := range set {
		for depth := 0; s != nil; depth++ {
			if depth > 32 || slices.Contains(out, s) {
				return nil, false
			}
			if s.Bool == nil || !*s.Bool {
				out = append(out, s)
			}
			s = s.Ref
		}
	}
	return out, true
}

// transparent reports whether the pruning may look into a container under s: s applies no
// other schema at the container's location (but $ref) and no keyword that compares the
// container, or counts its elements, in a way the pruning does not redo on the container.
func transparent(s *jsv.Schema) bool {
	return s.Bool == nil && s.DraftVersion >= 2020 && s.RecursiveRef == nil && s.DynamicRef == nil &&
		s.Not == nil && len(s.AllOf) == 0 && len(s.AnyOf) == 0 && len(s.OneOf) == 0 && s.If == nil &&
		s.Then == nil && s.Else == nil && s.UnevaluatedItems == nil && s.UnevaluatedProperties == nil &&
		s.Contains == nil && s.MinContains == nil && s.MaxContains == nil && s.Items == nil &&
		s.AdditionalItems == nil && s.Const == nil && s.Enum == nil && s.Format == nil &&
		len(s.Extensions) == 0 && len(s.DependentSchemas) == 0 && len(s.Dependencies) == 0 &&
		len(s.DependentRequired) == 0 && s.PropertyNames == nil
}

// typeAllows reports whether s's type allows t (array or object).
func typeAllows(s *jsv.Schema, t string) bool {
	return s.Types == nil || s.Types.IsEmpty() || slices.Contains(s.Types.ToStrings(), t)
}

// fastAccepts reports whether every schema of set surely accepts v.
func (p *pruner) fastAccepts(set []*jsv.Schema, v any) bool {
	for _, s := range set {
		f := p.v.fastOf[s]
		if f == nil || !f.accepts(v) {
			return false
		}
	}
	return true
}

// prune returns the value that stands in for v, which the schemas of set apply to, keeping the
// first budget (at least 1) of its issues in path order; n is a lower bound of its issues that
// the stand-in keeps; valid reports v surely valid. node is nil when out is v.
func (p *pruner) prune(v any, set []*jsv.Schema, budget int) (out any, n int, valid bool, node *standIn) {
	set, ok := expand(set)
	if len(set) == 0 {
		return v, 0, true, nil
	}
	if ok && p.fastAccepts(set, v) {
		return v, 0, true, nil
	}
	if ok && slices.IndexFunc(set, func(s *jsv.Schema) bool { return !transparent(s) }) < 0 {
		switch x := v.(type) {
		case []any:
			return p.array(x, set, budget)
		case map[string]any:
			return p.object(x, set, budget)
		}
	}
	switch v.(type) {
	case []any, map[string]any:
		if largeValue(v, pruneCheckMax) {
			return v, 0, false, nil
		}
	}
	for _, s := range set {
		if s.Validate(v) != nil {
			return v, 1, false, nil
		}
	}
	return v, 0, true, nil
}

// containerTypes keeps the schemas of set that allow the container's type t, and counts those
// that do not (the validator says only that of the container).
func containerTypes(set []*jsv.Schema, t string) (kept []*jsv.Schema, refused int) {
	kept = set
	for i, s := range set {
		if !typeAllows(s, t) {
			if refused == 0 {
				kept = slices.Clone(set[:i])
			}
			refused = 1
			continue
		}
		if refused > 0 {
			kept = append(kept, s)
		}
	}
	return kept, refused
}

// array prunes an array whose schemas are transparent.
func (p *pruner) array(x []any, set []*jsv.Schema, budget int) (any, int, bool, *standIn) {
	set, n := containerTypes(set, "array")
	if len(set) == 0 {
		return x, n, false, nil
	}
	prefix, minFail, maxFail := 0, 0, 0
	var items []*jsv.Schema
	for _, s := range set {
		prefix = max(prefix, len(s.PrefixItems))
		if s.MinItems != nil && len(x) < *s.MinItems {
			minFail = 1
		}
		if s.MaxItems != nil && len(x) > *s.MaxItems {
			maxFail = 1
		}
		if s.Items2020 != nil {
			items = append(items, s.Items2020)
		}
	}
	n += minFail + maxFail
	var (
		kept  []any // nil until the stand-in differs from x
		index []int
		kids  map[string]*standIn
	)
	change := func(i int) {
		if kept == nil {
			kept = slices.Clone(x[:i:i])
			index = make([]int, i)
			for j := range index {
				index[j] = j
			}
		}
	}
	for i, e := range x {
		if n >= budget {
			if i >= prefix {
				change(i)
				p.lossy = true
				break
			}
			// A slot of prefixItems keeps its place, for the elements after it.
			change(i)
			if kids == nil {
				kids = map[string]*standIn{}
			}
			kids[strconv.Itoa(len(kept))] = &standIn{past: true}
			kept, index = append(kept, nil), append(index, i)
			p.lossy = true
			continue
		}
		eset := items
		if i < prefix {
			eset = nil
			for _, s := range set {
				switch {
				case i < len(s.PrefixItems):
					eset = append(eset, s.PrefixItems[i])
				case s.Items2020 != nil:
					eset = append(eset, s.Items2020)
				}
			}
		}
		out, ni, valid, kid := p.prune(e, eset, budget-n)
		if valid && i >= prefix {
			change(i)
			continue
		}
		n += ni
		if kid != nil {
			change(i)
			if kids == nil {
				kids = map[string]*standIn{}
			}
			kids[strconv.Itoa(len(kept))] = kid
		}
		if kept != nil {
			kept, index = append(kept, out), append(index, i)
		}
	}
	if kept == nil {
		return x, n, false, nil
	}
	return kept, n, false, &standIn{orig: x, set: slices.Clone(set), index: index, kids: kids}
}

// object prunes an object whose schemas are transparent. Its members are walked in path order;
// those the schemas name (in properties or required), or refuse (additionalProperties: false),
// are kept, the others only when they may hold issues before the cut.
func (p *pruner) object(x map[string]any, set []*jsv.Schema, budget int) (any, int, bool, *standIn) {
	set, n := containerTypes(set, "object")
	if len(set) == 0 {
		return x, n, false, nil
	}
	for _, s := range set {
		if s.MinProperties != nil && len(x) < *s.MinProperties {
			n++
			break
		}
	}
	for _, s := range set {
		if s.MaxProperties != nil && len(x) > *s.MaxProperties {
			n++
			break
		}
	}
	// The members a schema validates are walked in path order; the others (refused by
	// additionalProperties: false, or not constrained) stay as they are.
	var keys []string
	var mset []*jsv.Schema
	for k := range x {
		if mset, _ = memberSchemas(set, k, mset[:0]); len(mset) > 0 {
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, compareTokens)
	var (
		kept map[string]any // nil until the stand-in differs from x
		kids map[string]*standIn
	)
	// change starts the stand-in: the members before keys[i] are kept as they are, and so are
	// those not walked.
	change := func(i int) {
		if kept != nil {
			return
		}
		kept = make(map[string]any, i+1)
		var buf []*jsv.Schema
		for k, e := range x {
			if buf, _ = memberSchemas(set, k, buf[:0]); len(buf) == 0 {
				kept[k] = e
			}
		}
		for _, k := range keys[:i] {
			kept[k] = x[k]
		}
	}
	for i, k := range keys {
		var keep bool
		mset, keep = memberSchemas(set, k, mset[:0])
		var (
			out   any
			valid bool
			kid   *standIn
		)
		switch {
		case n < budget:
			var ni int
			out, ni, valid, kid = p.prune(x[k], mset, budget-n)
			n += ni
		case keep: // past the cut, but named: its place is kept
			out, kid = nil, &standIn{past: true}
			p.lossy = true
		default:
			change(i)
			p.lossy = true
			continue
		}
		if valid && !keep {
			change(i)
			continue
		}
		if kid != nil {
			change(i)
			if kids == nil {
				kids = map[string]*standIn{}
			}
			kids[k] = kid
		}
		if kept != nil {
			kept[k] = out
		}
	}
	if kept == nil {
		return x, n, false, nil
	}
	return kept, n, false, &standIn{orig: x, set: slices.Clone(set), kids: kids}
}

// origin is the instance's location of a location in the value validated; at is the stand-in
// there, if any; past reports a location within a value past the cut.
func (c *issueCollector) origin(toks []string) (out []string, at *standIn, past bool) {
	out, at = toks, c.stand
	for i, tok := range toks {
		if at == nil {
			return out, nil, false
		}
		if at.past {
			return nil, nil, true
		}
		if at.index != nil {
			if j, err := strconv.Atoi(tok); err == nil && j >= 0 && j < len(at.index) && at.index[j] != j {
				if &out[0] == &toks[0] {
					out = slices.Clone(toks)
				}
				out[i] = strconv.Itoa(at.index[j])
			}
		}
		at = at.kids[tok]
	}
	if at != nil && at.past {
		return nil, nil, true
	}
	return out, at, false
}

// containerKeyword reports whether k is one of the keywords that the pruning of a container
// changes, and that are checked on the container itself instead.
func containerKeyword(k jsv.ErrorKind) bool {
	switch k.(type) {
	case *kind.MinItems, *kind.MaxItems, *kind.UniqueItems, *kind.MinProperties, *kind.MaxProperties:
		return true
	}
	return false
}

// uniqueItemsSchema checks uniqueItems alone, as the input schemas do.
var uniqueItemsSchema = sync.OnceValue(func() *jsv.Schema {
	c := jsv.NewCompiler()
	c.DefaultDraft(jsv.Draft2020)
	const url = "mem:///unique.json"
	if err := c.AddResource(url, map[string]any{"uniqueItems": true}); err != nil {
		panic(err)
	}
	return c.MustCompile(url)
})

// regenerate adds the issues of the container keywords of the pruned containers under s (at
// toks in the instance), checked on the containers themselves.
func (c *issueCollector) regenerate(s *standIn, toks []string) {
	if s == nil || s.past {
		return
	}
	report := func(sch *jsv.Schema, k jsv.ErrorKind) {
		c.leaf(&jsv.ValidationError{SchemaURL: sch.Location, InstanceLocation: toks, ErrorKind: k})
	}
	saved := c.stand
	c.stand = nil // toks are the instance's already
	for _, sch := range s.set {
		switch x := s.orig.(type) {
		case []any:
			if sch.MinItems != nil && len(x) < *sch.MinItems {
				report(sch, &kind.MinItems{Got: len(x), Want: *sch.MinItems})
			}
			if sch.MaxItems != nil && len(x) > *sch.MaxItems {
				report(sch, &kind.MaxItems{Got: len(x), Want: *sch.MaxItems})
			}
			if sch.UniqueItems && len(x) > 1 {
				var ve *jsv.ValidationError
				if errors.As(uniqueItemsSchema().Validate(x), &ve) {
					for len(ve.Causes) > 0 {
						ve = ve.Causes[0]
					}
					report(sch, ve.ErrorKind)
				}
			}
		case map[string]any:
			if sch.MinProperties != nil && len(x) < *sch.MinProperties {
				report(sch, &kind.MinProperties{Got: len(x), Want: *sch.MinProperties})
			}
			if sch.MaxProperties != nil && len(x) > *sch.MaxProperties {
				report(sch, &kind.MaxProperties{Got: len(x), Want: *sch.MaxProperties})
			}
		}
	}
	c.stand = saved
	for tok, kid := range s.kids {
		if s.index != nil {
			j, _ := strconv.Atoi(tok)
			tok = strconv.Itoa(s.index[j])
		}
		c.regenerate(kid, childTokens(toks, tok))
	}
}

// memberSchemas appends to mset the schemas that set applies to the member k of an object;
// keep reports a member the object must keep: named in properties or required, or refused by
// additionalProperties: false (the validator names it, whatever it holds).
func memberSchemas(set []*jsv.Schema, k string, mset []*jsv.Schema) (_ []*jsv.Schema, keep bool) {
	for _, s := range set {
		evaluated := false
		if sub, ok := s.Properties[k]; ok {
			mset, evaluated, keep = append(mset, sub), true, true
		}
		for re, sub := range s.PatternProperties {
			if re.MatchString(k) {
				mset, evaluated = append(mset, sub), true
			}
		}
		if slices.Contains(s.Required, k) {
			keep = true
		}
		if !evaluated {
			switch ap := s.AdditionalProperties.(type) {
			case bool:
				keep = keep || !ap
			case *jsv.Schema:
				mset = append(mset, ap)
			}
		}
	}
	return mset, keep
}
