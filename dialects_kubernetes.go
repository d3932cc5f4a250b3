package remedy

// Kubernetes' Status object: reason, message, details.causes.

func (p *parser) readKubernetes() Dialect {
	if p.top.kind.Str() != "Status" || p.top.status.Str() != "Failure" {
		return ""
	}
	e := &p.e
	e.Code = p.top.reason.Str()
	e.Message = p.top.message.Str()
	p.setStatus(p.top.code)
	details := p.top.details
	if after := details.member("retryAfterSeconds"); after.Num() > 0 {
		p.facts.k8s = waitFromJSON(after, 1e9)
	}
	for it := details.member("causes").iter(); it.next(); {
		c := it.val()
		field := c.member("field").Str()
		if field == "" {
			continue // a cause without a field restates the message
		}
		p.addIssue(Issue{Path: toPointer(field), Code: c.member("reason").Str(), Message: c.member("message").Str()})
	}
	if e.Code == "" {
		e.Code = "Unknown"
	}
	return DialectKubernetes
}
