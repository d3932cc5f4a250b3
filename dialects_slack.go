package remedy

import (
	"strings"

	"github.com/remedy-go/remedy/internal/tape"
)

// Slack's Web API: ok false with an error code, the scope a token needs, and
// response_metadata.messages (in a 2xx).

func (p *parser) readSlack() Dialect {
	if p.top.ok.Kind() != tape.False {
		return ""
	}
	e := &p.e
	e.Code = p.top.error.Text()
	if needed := p.top.needed.Str(); needed != "" && p.full {
		e.Hint = "the token needs scope " + needed
		if prov := p.top.provided.Str(); prov != "" {
			e.Hint += " (it has " + prov + ")"
		}
	}
	for it := p.top.metadata.Member("messages").Iter(); it.Next(); {
		msg := strings.TrimSpace(strings.TrimPrefix(it.Val().Str(), "[ERROR]"))
		if e.Message == "" {
			e.Message = msg
		}
		if i := strings.Index(msg, "missing required field: "); i >= 0 {
			if !p.full {
				p.unread = true
				continue
			}
			f := strings.TrimSpace(msg[i+len("missing required field: "):])
			p.addIssue(Issue{Path: toPointer(f), Code: "required", Message: msg})
		} else if text, ptr, ok := slackPointer(msg); ok {
			// Block Kit's failures end in the member they are about: "must be less than
			// 3001 characters [json-pointer:/blocks/0/text/text]".
			if !p.full {
				p.unread, p.kept = true, true
				continue
			}
			p.addIssue(Issue{Path: ptr, Message: text})
		}
	}
	return DialectSlack
}

// slackPointer splits a Slack message that ends in "[json-pointer:/...]" into its text and
// the pointer.
func slackPointer(msg string) (text, ptr string, ok bool) {
	const mark = " [json-pointer:"
	i := strings.LastIndex(msg, mark)
	if i < 0 || !strings.HasSuffix(msg, "]") {
		return "", "", false
	}
	ptr = msg[i+len(mark) : len(msg)-1]
	if ptr == "" || ptr[0] != '/' || strings.ContainsAny(ptr, " []") {
		return "", "", false
	}
	return msg[:i], ptr, true
}
