package rewrite

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/remedy-go/remedy"
	"github.com/tidwall/gjson"
)

// Placing what a failure names onto the operation's schema (Request.Schema): a path the server
// wrote in another form, a field it named without a path, an issue that names only its rule.
// Each becomes a JSON Pointer into the arguments only when exactly one place fits; otherwise
// it stays as the server wrote it, and Default says why it could not act on it.

const (
	// maxMapSegments bounds the segments of a path or field that is mapped: no request's
	// arguments nest deeper than validJSON lets them.
	maxMapSegments = 64
	// maxMapWork bounds the work of placing the issues of one failure, and of reading the
	// operation's schema's facts for them, whatever the size of the schema, of the arguments,
	// and of the issue list: in units of one value visited or 256 bytes of schema read (see
	// charge), a few tens of milliseconds at worst.
	maxMapWork = 1 << 15
	// maxImplicitIndices bounds the arrays one name of a field may pass through without their
	// index: a schema that refers to itself would otherwise nest arrays forever.
	maxImplicitIndices = 4
)

// Why an issue is not placed, as Blocked.Why says it.
const (
	whyFieldNoSchema   = "the field is not a path into the arguments, and no readable schema maps it onto one"
	whyFieldUnreadable = "the field cannot be read as a path"
	whyFieldNoProperty = "the field names no property of the schema"
	whyFieldSeveral    = "the field matches several properties of the schema"
	whyIndexSeveral    = "the field leaves out an array index, and several elements could be the one"
	whyIndexNone       = "the field leaves out an array index, and no element breaks the schema there"
	whyNoArray         = "the field goes through an array the arguments do not hold"
	whyTooLarge        = "the field, the schema or the arguments are too large to map within bounds"
	whyNoField         = "the issue names no field"
	whyNoFieldUnknown  = "the issue names no field, and its code names no rule the schema can be checked for"
	whyNoFieldAlike    = "the issue names no field, and another issue names the same rule"
	whyNoFieldSeveral  = "the issue names no field, and several values of the arguments break the schema as its code says"
	whyNoFieldNone     = "the issue names no field, and no value of the arguments breaks the schema as its code says"
)

// placement is where an issue lands in the arguments: its pointer, or why it has none.
type placement struct {
	path string
	why  string // why the issue has no path
	lost bool   // the issue names a field that could not be placed: no rule may act for it
}

// locationWords are the leading segments that say where a parameter was read (pydantic's
// "body", fastify's "querystring"): the arguments merge every location into one object.
var locationWords = map[string]bool{"body": true, "query": true, "querystring": true, "path": true, "params": true, "form": true}

// placeIssues places every issue: a Path the operation's schema knows, or the arguments hold,
// stays as written; another is mapped onto the schema (see Default); a Field is
// mapped, or lost; an issue with neither is placed on the one value of the arguments that
// breaks the schema as its code says, when it is the only such issue of its kind. Nil when
// there is nothing to place (no schema, no Field): every issue is where its Path says.
func placeIssues(issues []remedy.Issue, op gjson.Result, doc string) []placement {
	need := op.Exists()
	for i := 0; i < len(issues) && !need; i++ {
		need = issues[i].Field != ""
	}
	if !need {
		return nil
	}
	pl := placer{op: op, doc: doc, work: maxMapWork}
	if op.Exists() {
		pl.args = gjson.Parse(doc)
	}
	var pathless [numClasses]int
	for i := range issues {
		if is := &issues[i]; is.Path == "" && is.Field == "" && len(is.SuggestedValue) == 0 {
			pathless[codeClass(is.Code)]++
		}
	}
	at := make([]placement, len(issues))
	root := []gjson.Result{op}
	for i := range issues {
		is := &issues[i]
		at[i] = placement{path: is.Path}
		if op.Exists() {
			pl.charge(root) // finding where a path leads reads the schema from its root
		}
		switch {
		case is.Path != "":
			if op.Exists() {
				// A path that stays as written keeps why it was not mapped, for when nothing
				// is found there.
				at[i].path, at[i].why = pl.placePath(is)
			}
		case is.Field != "":
			p, why := "", whyFieldNoSchema
			if op.Exists() {
				p, why = pl.placeField(is)
			}
			if why != "" {
				at[i].why, at[i].lost = why, true
				continue
			}
			at[i].path = p
		case len(is.SuggestedValue) > 0 || !op.Exists():
			// A suggestion for the whole arguments is one; without a schema nothing places it.
		default:
			class := codeClass(is.Code)
			switch {
			case class == classNone:
				at[i].why = whyNoFieldUnknown
			case pathless[class] > 1:
				at[i].why = whyNoFieldAlike
			default:
				at[i].path, at[i].why = pl.placeRule(class)
			}
		}
	}
	return at
}

// placer places the issues of one failure; work is what is left of maxMapWork.
type placer struct {
	op   gjson.Result // the operation's schema
	doc  string       // the arguments
	args gjson.Result // the arguments, parsed
	work int
	cut  bool // the work ran out

	walked bool
	breaks [numClasses]struct {
		n     int
		first string
	} // the values of the arguments that break the schema, by kind (see walkArgs)
}

// charge counts the work of visiting one value whose schema is parts, and reports whether the
// work has run out. Reading a schema's keywords scans its text, so a large schema costs more:
// a $ref to the root of a large schema costs the whole of it at every visit.
func (pl *placer) charge(parts []gjson.Result) bool {
	pl.work -= schemaCost(parts)
	if pl.work < 0 {
		pl.cut = true
	}
	return pl.cut
}

// schemaCost is the work units of reading parts: one, and one more per 256 bytes of them.
func schemaCost(parts []gjson.Result) int {
	n := 1
	for _, p := range parts {
		n += len(p.Raw) >> 8
	}
	return n
}

// nameSeg is one segment of a path or field: a name, or an array index (digits).
type nameSeg struct {
	name  string
	index bool
}

// placePath maps a Path the schema does not know and the arguments do not hold: its names
// matched to the schema's properties regardless of case, "_" and "-" ("/Quantity" to
// "/quantity", "/unit_price" to "/unitPrice"), a leading location word that names no property
// dropped ("/body/quantity"). A path that stays as written is returned with why, when it was
// mapped and no one place fit.
func (pl *placer) placePath(is *remedy.Issue) (string, string) {
	segs, ok := pointerSegments(is.Path)
	if !ok {
		return is.Path, ""
	}
	if len(segs) > maxMapSegments {
		return is.Path, whyTooLarge
	}
	if _, _, known := navigateIn(pl.op, pl.op, segs); known {
		return is.Path, ""
	}
	if _, v, ok := sjsonPath(pl.doc, is.Path); ok && v.Exists() {
		return is.Path, "" // the server names a value the caller sent, as the caller spelled it
	}
	names := make([]nameSeg, len(segs))
	for i, s := range segs {
		_, index := arrayIndex(s)
		names[i] = nameSeg{name: s, index: index}
	}
	alts := [][]nameSeg{names}
	if len(names) > 1 && locationWords[strings.ToLower(names[0].name)] && !pl.rootNames(names[0].name) {
		alts = append(alts, names[1:])
	}
	p, why := pl.place(alts, codeClass(is.Code), true)
	if why != "" {
		return is.Path, why
	}
	return p, ""
}

// placeField maps a Field: "Lines[1].SKU" (Go names) or "lines.quantity" (JSON names, the
// indices left out), read from the root of the arguments. A leading Go type name that names no
// property ("CreateItem.Lines[1].SKU") is dropped.
func (pl *placer) placeField(is *remedy.Issue) (string, string) {
	segs, ok := fieldSegments(is.Field)
	if !ok {
		return "", whyFieldUnreadable
	}
	alts := [][]nameSeg{segs}
	if first := segs[0]; len(segs) > 1 && !first.index && !segs[1].index && startsUpper(first.name) && !pl.rootNames(first.name) {
		alts = append(alts, segs[1:])
	}
	return pl.place(alts, codeClass(is.Code), false)
}

func startsUpper(s string) bool {
	r, _ := utf8.DecodeRuneInString(s)
	return unicode.IsUpper(r)
}

// rootNames reports whether a property of the schema's root matches name (see foldName).
func (pl *placer) rootNames(name string) bool {
	var buf [8]gjson.Result
	_, _, n := matchProperty(expandIn(pl.op, buf[:0], pl.op, 0), name, false)
	return n > 0
}

// fieldSegments reads a field as Go validators and decoders write it: names joined by ".",
// an index or a map key in brackets ("Lines[1].SKU", "Attrs[color]"). ok is false for
// anything else, and for more than maxMapSegments segments.
func fieldSegments(field string) ([]nameSeg, bool) {
	if field == "" || strings.Count(field, ".")+strings.Count(field, "[") >= maxMapSegments {
		return nil, false
	}
	var segs []nameSeg
	for part := range strings.SplitSeq(field, ".") {
		name, rest, _ := strings.Cut(part, "[")
		if name != "" {
			segs = append(segs, nameSeg{name: name})
		} else if rest == "" || len(segs) == 0 && part[0] != '[' {
			return nil, false // an empty name: "a..b", a trailing "."
		}
		for rest != "" {
			key, after, ok := strings.Cut(rest, "]")
			if !ok || key == "" {
				return nil, false
			}
			if n := len(key); n >= 2 && (key[0] == '\'' || key[0] == '"') && key[n-1] == key[0] {
				segs = append(segs, nameSeg{name: key[1 : n-1]})
			} else {
				_, index := arrayIndex(key)
				segs = append(segs, nameSeg{name: key, index: index})
			}
			if after == "" {
				break
			}
			if after[0] != '[' {
				return nil, false
			}
			rest = after[1:]
		}
	}
	return segs, len(segs) > 0
}

// mapping is one search for the places a path or field names.
type mapping struct {
	*placer
	class      ruleClass // what the issue's code says is wrong, to tell elements apart
	exact      bool      // a property spelled exactly as the segment is the one meant
	found      []string  // the places found, two at most: one is the answer, two are too many
	guessed    bool      // an index was chosen among several elements on the way to a place
	several    bool      // a name matched several properties
	noProperty bool      // a name matched none
	noArray    bool      // the arguments hold no elements where an index was left out
}

// place walks each alternative reading of a path or field through the schema and the
// arguments, and returns the pointer when exactly one place fits, else why none does.
func (pl *placer) place(alts [][]nameSeg, class ruleClass, exact bool) (string, string) {
	m := mapping{placer: pl, class: class, exact: exact}
	for _, segs := range alts {
		m.walk(pl.op, pl.args, segs, "", false, 0)
	}
	n := len(m.found)
	switch {
	case n == 1 && !m.cut:
		return m.found[0], ""
	case m.cut:
		return "", whyTooLarge
	case m.several:
		return "", whyFieldSeveral
	case n > 1 && m.guessed:
		return "", whyIndexSeveral
	case n > 1:
		return "", whyFieldSeveral
	case m.guessed:
		return "", whyIndexNone
	case m.noArray:
		return "", whyNoArray
	}
	return "", whyFieldNoProperty
}

// walk follows segs from s, the schema of v (the arguments' value at ptr, absent when they
// hold none): a name to the one property it matches, an index to the array's items, and a
// name where the schema holds an array (an index left out) into each element the arguments
// hold, implicit counting those in a row. An element chosen among several (guessed) is a
// place only when its value breaks the schema as the issue's code says.
func (m *mapping) walk(s, v gjson.Result, segs []nameSeg, ptr string, guessed bool, implicit int) {
	if m.cut || len(m.found) > 1 {
		return
	}
	var buf [8]gjson.Result
	parts := expandIn(m.op, buf[:0], s, 0)
	if m.charge(parts) {
		return
	}
	if len(segs) == 0 {
		if guessed {
			m.guessed = true
			if !breaks(v, parts, m.class) {
				return
			}
		}
		if len(m.found) == 0 || m.found[0] != ptr {
			m.found = append(m.found, ptr)
		}
		return
	}
	seg := segs[0]
	key, sub, n := matchProperty(parts, seg.name, m.exact || seg.index)
	switch {
	case n == 1:
		var child gjson.Result
		if v.IsObject() {
			child = v.Get(escapeKey(key))
		}
		m.walk(sub, child, segs[1:], appendPointer(ptr, key), guessed, 0)
		return
	case n > 1:
		m.several = true
		return
	}
	items := itemsOf(parts)
	switch {
	case !items.Exists():
		m.noProperty = true
	case seg.index:
		var child gjson.Result
		if v.IsArray() {
			child = v.Get(seg.name)
		}
		m.walk(items, child, segs[1:], ptr+"/"+seg.name, guessed, 0)
	case implicit >= maxImplicitIndices:
		m.noProperty = true
	case !v.IsArray() || v.Get("#").Int() == 0:
		m.noArray = true
	case v.Get("#").Int() == 1:
		m.walk(items, v.Get("0"), segs, ptr+"/0", guessed, implicit+1)
	default:
		i := 0
		v.ForEach(func(_, e gjson.Result) bool {
			m.walk(items, e, segs, ptr+"/"+strconv.Itoa(i), true, implicit+1)
			i++
			return !m.cut && len(m.found) < 2
		})
	}
}

// matchProperty finds the property of parts that name matches: when exact, the one spelled so
// if there is one; otherwise every property whose name folds to the same (see foldName). It
// returns the key and schema of the first, and how many keys matched.
func matchProperty(parts []gjson.Result, name string, exact bool) (string, gjson.Result, int) {
	want := foldName(name)
	var (
		key string
		sub gjson.Result
		n   int
	)
	for _, p := range parts {
		props := p.Get("properties")
		if !props.IsObject() {
			continue
		}
		if exact {
			if s := props.Get(escapeKey(name)); s.IsObject() {
				return name, s, 1
			}
		}
		if want == "" {
			continue
		}
		props.ForEach(func(k, s gjson.Result) bool {
			if k.Str != key && s.IsObject() && foldName(k.Str) == want {
				if n == 0 {
					key, sub = k.Str, s
				}
				n++
			}
			return true
		})
	}
	return key, sub, n
}

// foldName is a name with case, "_", "-" and spaces left out, so that the spellings of one
// name match: "UnitPrice", "unit_price", "unitPrice", "unit-price".
func foldName(name string) string {
	var b strings.Builder
	for _, r := range name {
		switch {
		case r == '_' || r == '-' || r == ' ':
		case r < utf8.RuneSelf:
			if 'A' <= r && r <= 'Z' {
				r += 'a' - 'A'
			}
			b.WriteRune(r)
		default:
			b.WriteRune(unicode.ToLower(r))
		}
	}
	return b.String()
}

// itemsOf is the schema of an array's items among parts, absent when none is one of an array.
func itemsOf(parts []gjson.Result) gjson.Result {
	for _, p := range parts {
		if items := p.Get("items"); items.IsObject() {
			return items
		}
	}
	return gjson.Result{}
}

// placeRule places an issue that names only its rule on the one value of the arguments that
// breaks the schema as the rule says.
func (pl *placer) placeRule(class ruleClass) (string, string) {
	if !pl.walked {
		pl.walked = true
		pl.walkArgs(pl.op, pl.args, "", 0)
	}
	b := pl.breaks[class]
	switch {
	case pl.cut:
		return "", whyTooLarge
	case b.n == 1:
		return b.first, ""
	case b.n > 1:
		return "", whyNoFieldSeveral
	}
	return "", whyNoFieldNone
}

// walkArgs checks the arguments against the facts of the schema Default reads (enum,
// type, bounds and lengths, required properties), counting the values that break it by kind.
// It is no validator: what it cannot read (a union, a pattern, a format) breaks nothing.
func (pl *placer) walkArgs(s, v gjson.Result, ptr string, depth int) {
	if pl.cut {
		return
	}
	var buf [8]gjson.Result
	parts := expandIn(pl.op, buf[:0], s, 0)
	if pl.charge(parts) {
		return
	}
	for c := classEnum; c <= classMin; c++ {
		if breaks(v, parts, c) {
			pl.note(c, ptr)
		}
	}
	if depth >= maxMapSegments {
		return
	}
	switch {
	case v.IsObject():
		for _, p := range parts {
			p.Get("required").ForEach(func(_, k gjson.Result) bool {
				if k.Type == gjson.String && !v.Get(escapeKey(k.Str)).Exists() {
					pl.note(classRequired, appendPointer(ptr, k.Str))
				}
				return true
			})
		}
		v.ForEach(func(k, child gjson.Result) bool {
			for _, p := range parts {
				if sub := p.Get("properties").Get(escapeKey(k.Str)); sub.IsObject() {
					pl.walkArgs(sub, child, appendPointer(ptr, k.Str), depth+1)
					break
				}
			}
			return !pl.cut
		})
	case v.IsArray():
		items := itemsOf(parts)
		if !items.Exists() {
			return
		}
		i := 0
		v.ForEach(func(_, e gjson.Result) bool {
			pl.walkArgs(items, e, ptr+"/"+strconv.Itoa(i), depth+1)
			i++
			return !pl.cut
		})
	}
}

// note counts a value that breaks the schema in the way class names.
func (pl *placer) note(class ruleClass, ptr string) {
	b := &pl.breaks[class]
	if b.n > 0 && b.first == ptr {
		return
	}
	if b.n == 0 {
		b.first = ptr
	}
	b.n++
}
