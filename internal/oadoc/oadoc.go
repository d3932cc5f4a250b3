// Package oadoc reads the text of an OpenAPI document, JSON or YAML, into the JSON that the
// client's and the conformance kit's readers decode, and holds what both read the same way:
// whether an operation takes an Idempotency-Key.
package oadoc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"mime"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Format names the notation a document was read in.
const (
	JSON = "JSON"
	YAML = "YAML"
)

// SyntaxError is a document that is neither JSON nor YAML, or YAML that has no JSON
// equivalent: what it was read as, where (counted from 1; 0 when the reader does not say)
// and why.
type SyntaxError struct {
	Format       string
	Line, Column int
	Msg          string
}

// Error says what is wrong, and where when the reader knows.
func (e *SyntaxError) Error() string {
	switch {
	case e.Line > 0 && e.Column > 0:
		return fmt.Sprintf("the document is not valid %s: line %d, column %d: %s", e.Format, e.Line, e.Column, e.Msg)
	case e.Line > 0:
		return fmt.Sprintf("the document is not valid %s: line %d: %s", e.Format, e.Line, e.Msg)
	}
	return fmt.Sprintf("the document is not valid %s: %s", e.Format, e.Msg)
}

// YAMLMedia reports whether a Content-Type names YAML (application/yaml, application/x-yaml,
// text/yaml, application/openapi+yaml, ...).
func YAMLMedia(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return false
	}
	return strings.HasSuffix(mt, "/yaml") || strings.HasSuffix(mt, "/x-yaml") || strings.HasSuffix(mt, "+yaml")
}

// ToJSON returns doc as JSON, and the notation it was read in. A document whose text starts
// with "{" (after a byte order mark and white space) is JSON and returned as it is, unless
// it is not valid JSON but is valid YAML (a flow mapping such as {openapi: 3.1.0}); any other
// text is read as YAML, one document of it, and converted: mapping keys become strings as
// written (200 → "200"), scalars take the type YAML 1.2 gives them (a timestamp or a binary
// stays the string written, an integer or float keeps its digits), anchors and merge keys
// (<<) are expanded.
//
// contentType, when the document was fetched, only decides which error is reported when
// neither notation reads the text: a YAML media type reports YAML's. The error is a
// *SyntaxError naming the line, and the column where the reader gives one.
func ToJSON(doc []byte, contentType string) ([]byte, string, error) {
	doc = bytes.TrimPrefix(doc, []byte("\xef\xbb\xbf"))
	if t := bytes.TrimLeft(doc, " \t\r\n"); len(t) > 0 && t[0] == '{' {
		if json.Valid(doc) {
			return doc, JSON, nil
		}
		out, yerr := fromYAML(doc)
		if yerr == nil {
			return out, YAML, nil
		}
		if YAMLMedia(contentType) {
			return nil, YAML, yerr
		}
		return nil, JSON, jsonError(doc)
	}
	out, err := fromYAML(doc)
	return out, YAML, err
}

// jsonError says where and why doc is not JSON.
func jsonError(doc []byte) error {
	var v any
	err := json.Unmarshal(doc, &v)
	if err == nil {
		return &SyntaxError{Format: JSON, Msg: "not one JSON value"}
	}
	var syn *json.SyntaxError
	if errors.As(err, &syn) {
		line, col := Position(doc, syn.Offset-1)
		return &SyntaxError{Format: JSON, Line: line, Column: col, Msg: syn.Error()}
	}
	return &SyntaxError{Format: JSON, Msg: err.Error()}
}

// Position is a byte offset into doc as people count: line and column, from 1.
func Position(doc []byte, offset int64) (line, col int) {
	offset = min(max(offset, 0), int64(len(doc)))
	before := doc[:offset]
	line = bytes.Count(before, []byte("\n")) + 1
	col = len([]rune(string(before[bytes.LastIndexByte(before, '\n')+1:]))) + 1
	return line, col
}

// yamlLine reads the line from go.yaml.in/yaml's parse errors: "yaml: line 3: ...".
var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// yamlParserProblems are the problems go.yaml.in/yaml/v3's parser (parserc.go) reports. It
// names their line counted from 0 — only its scanner's problems are counted from 1 — so they
// get the 1 it leaves out. The module's v3 line is frozen, its messages with it.
var yamlParserProblems = map[string]bool{
	"did not find expected <stream-start>":   true,
	"did not find expected <document start>": true,
	"found undefined tag handle":             true,
	"did not find expected node content":     true,
	"did not find expected '-' indicator":    true,
	"did not find expected key":              true,
	"did not find expected ',' or ']'":       true,
	"did not find expected ',' or '}'":       true,
	"found duplicate %YAML directive":        true,
	"found incompatible YAML document":       true,
	"found duplicate %TAG directive":         true,
}

func yamlError(err error) *SyntaxError {
	msg := err.Error()
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		line, _ := strconv.Atoi(m[1])
		if yamlParserProblems[m[2]] {
			line++
		}
		return &SyntaxError{Format: YAML, Line: line, Msg: m[2]}
	}
	return &SyntaxError{Format: YAML, Msg: strings.TrimPrefix(msg, "yaml: ")}
}

// Bounds on the conversion: anchors let a short text name a huge tree (a "billion laughs"),
// so what is written is bounded by the input's size, and the nesting by a depth no OpenAPI
// document comes near.
const (
	maxDepth     = 1000
	minOutput    = 1 << 20
	outputFactor = 16
)

func fromYAML(doc []byte) (out []byte, err error) {
	dec := yaml.NewDecoder(bytes.NewReader(doc))
	var root yaml.Node
	if err := dec.Decode(&root); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, &SyntaxError{Format: YAML, Msg: "the document is empty"}
		}
		return nil, yamlError(err)
	}
	var next yaml.Node
	if err := dec.Decode(&next); !errors.Is(err, io.EOF) {
		if err != nil {
			return nil, yamlError(err)
		}
		return nil, &SyntaxError{Format: YAML, Line: next.Line, Column: next.Column,
			Msg: "a second YAML document follows the first: an OpenAPI document is one"}
	}
	c := &converter{limit: max(outputFactor*len(doc), minOutput)}
	n := &root
	if n.Kind == yaml.DocumentNode {
		if len(n.Content) == 0 {
			return nil, &SyntaxError{Format: YAML, Msg: "the document is empty"}
		}
		n = n.Content[0]
	}
	if err := c.node(n, 0); err != nil {
		return nil, err
	}
	return c.buf.Bytes(), nil
}

type converter struct {
	buf   bytes.Buffer
	limit int
	steps int          // mapping members read, merge keys included: bounded by limit too
	open  []*yaml.Node // the anchors being expanded, to refuse one that contains itself
}

func (c *converter) fail(n *yaml.Node, format string, args ...any) error {
	return &SyntaxError{Format: YAML, Line: n.Line, Column: n.Column, Msg: fmt.Sprintf(format, args...)}
}

func (c *converter) node(n *yaml.Node, depth int) error {
	if depth > maxDepth {
		return c.fail(n, "nested more than %d deep", maxDepth)
	}
	if c.buf.Len() > c.limit {
		return c.fail(n, "its anchors expand to more than %d bytes of JSON", c.limit)
	}
	switch n.Kind {
	case yaml.AliasNode:
		for _, a := range c.open {
			if a == n.Alias {
				return c.fail(n, "alias *%s is inside the anchor it names", n.Value)
			}
		}
		c.open = append(c.open, n.Alias)
		err := c.node(n.Alias, depth+1)
		c.open = c.open[:len(c.open)-1]
		return err
	case yaml.MappingNode:
		return c.mapping(n, depth)
	case yaml.SequenceNode:
		c.buf.WriteByte('[')
		for i, e := range n.Content {
			if i > 0 {
				c.buf.WriteByte(',')
			}
			if err := c.node(e, depth+1); err != nil {
				return err
			}
		}
		c.buf.WriteByte(']')
		return nil
	case yaml.ScalarNode:
		return c.scalar(n)
	case yaml.DocumentNode:
		return c.fail(n, "a document inside a document")
	}
	return c.fail(n, "a node of unknown kind")
}

// member is one key and value of a mapping, merge keys expanded.
type member struct {
	key   string
	value *yaml.Node
}

func (c *converter) mapping(n *yaml.Node, depth int) error {
	members, err := c.members(n, depth)
	if err != nil {
		return err
	}
	c.buf.WriteByte('{')
	for i, m := range members {
		if i > 0 {
			c.buf.WriteByte(',')
		}
		writeString(&c.buf, m.key)
		c.buf.WriteByte(':')
		if err := c.node(m.value, depth+1); err != nil {
			return err
		}
	}
	c.buf.WriteByte('}')
	return nil
}

// members lists a mapping's members in order: its own, then those its merge keys (<<) bring
// that it does not have itself. A key written twice is an error, as YAML says.
func (c *converter) members(n *yaml.Node, depth int) ([]member, error) {
	if depth > maxDepth {
		return nil, c.fail(n, "nested more than %d deep", maxDepth)
	}
	var own []member
	var merged []*yaml.Node
	seen := map[string]*yaml.Node{}
	if c.steps += len(n.Content); c.steps > c.limit {
		return nil, c.fail(n, "its merge keys expand to more than %d members", c.limit)
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := resolveAlias(n.Content[i]), n.Content[i+1]
		if k.Kind == yaml.ScalarNode && k.Tag == "!!merge" {
			merged = append(merged, v)
			continue
		}
		if k.Kind != yaml.ScalarNode {
			return nil, c.fail(n.Content[i], "a mapping key that is not a scalar has no JSON equivalent")
		}
		if prev, dup := seen[k.Value]; dup {
			return nil, c.fail(n.Content[i], "key %q is already defined at line %d", k.Value, prev.Line)
		}
		seen[k.Value] = n.Content[i]
		own = append(own, member{k.Value, v})
	}
	for _, m := range merged {
		src := resolveAlias(m)
		var sources []*yaml.Node
		switch src.Kind {
		case yaml.MappingNode:
			sources = []*yaml.Node{src}
		case yaml.SequenceNode:
			for _, e := range src.Content {
				sources = append(sources, resolveAlias(e))
			}
		}
		for _, s := range sources {
			if s.Kind != yaml.MappingNode {
				return nil, c.fail(m, "a merge key (<<) must name a mapping or a list of mappings")
			}
			for _, a := range c.open {
				if a == s {
					return nil, c.fail(m, "a merge key (<<) names the mapping it is in")
				}
			}
			c.open = append(c.open, s)
			inner, err := c.members(s, depth+1)
			c.open = c.open[:len(c.open)-1]
			if err != nil {
				return nil, err
			}
			for _, im := range inner {
				if _, ok := seen[im.key]; !ok {
					seen[im.key] = m
					own = append(own, im)
				}
			}
		}
	}
	return own, nil
}

func resolveAlias(n *yaml.Node) *yaml.Node {
	for i := 0; n.Kind == yaml.AliasNode && n.Alias != nil && i < maxDepth; i++ {
		n = n.Alias
	}
	return n
}

// jsonNumber matches a number as JSON writes it, which is then kept digit for digit.
var jsonNumber = regexp.MustCompile(`^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$`)

func (c *converter) scalar(n *yaml.Node) error {
	switch n.ShortTag() {
	case "!!null":
		c.buf.WriteString("null")
	case "!!bool":
		c.buf.WriteString(strconv.FormatBool(strings.EqualFold(n.Value, "true")))
	case "!!int":
		if jsonNumber.MatchString(n.Value) {
			c.buf.WriteString(n.Value)
			break
		}
		var i int64
		if err := n.Decode(&i); err == nil {
			c.buf.WriteString(strconv.FormatInt(i, 10))
			break
		}
		var u uint64
		if err := n.Decode(&u); err == nil {
			c.buf.WriteString(strconv.FormatUint(u, 10))
			break
		}
		return c.fail(n, "integer %s is out of range", n.Value)
	case "!!float":
		if jsonNumber.MatchString(n.Value) {
			c.buf.WriteString(n.Value)
			break
		}
		var f float64
		if err := n.Decode(&f); err != nil {
			return c.fail(n, "%s is not a number", n.Value)
		}
		if math.IsInf(f, 0) || math.IsNaN(f) {
			return c.fail(n, "%s has no JSON equivalent", n.Value)
		}
		c.buf.WriteString(strconv.FormatFloat(f, 'g', -1, 64))
	default:
		// Strings, and what JSON has no type for (timestamps, binary, a tag of the
		// document's own): the text as written.
		writeString(&c.buf, n.Value)
	}
	return nil
}

func writeString(b *bytes.Buffer, s string) {
	enc, _ := json.Marshal(s) // a string always encodes
	b.Write(enc)
}
