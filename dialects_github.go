package remedy

import "strings"

// GitHub's REST failures: a message, a documentation URL, and errors naming resource, field and code.

func (p *parser) readGitHub() Dialect {
	t := &p.top
	errs := t.errors
	if !t.message.IsString() {
		return ""
	}
	first := errs.Member("0")
	if !t.documentationURL.Exists() && !first.Member("resource").Exists() && !first.Member("field").Exists() {
		return ""
	}
	e := &p.e
	e.Message = t.message.Str()
	e.DocsURL = t.documentationURL.Str()
	p.setStatus(t.status)
	e.Code = snakeWords(e.Message)
	if !p.full {
		p.unread = p.unread || errs.Len() > 0
		return DialectGitHub
	}
	for it := errs.Iter(); it.Next(); {
		x := it.Val()
		if x.IsString() {
			p.addIssue(Issue{Message: x.Str()})
			continue
		}
		is := Issue{Code: x.Member("code").Str(), Message: x.Member("message").Str()}
		if f := x.Member("field").Str(); f != "" {
			is.Path = toPointer(f)
		}
		if is.Message == "" && is.Code != "" {
			is.Message = x.Member("resource").Str() + "." + x.Member("field").Str() + " is " + strings.ReplaceAll(is.Code, "_", " ")
		}
		p.addIssue(is)
	}
	return DialectGitHub
}

// snakeWords turns a short phrase ("Validation Failed") into a code ("validation_failed"); a
// phrase that is long or carries anything but letters and spaces is not a code.
func snakeWords(s string) string {
	if len(s) == 0 || len(s) > 40 {
		return ""
	}
	var buf [40]byte
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= 'a' && c <= 'z':
			buf[i] = c
		case c >= 'A' && c <= 'Z':
			buf[i] = c + 'a' - 'A'
		case c == ' ':
			buf[i] = '_'
		default:
			return ""
		}
	}
	return string(buf[:len(s)])
}
