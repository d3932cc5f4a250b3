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
	if after := details.Member("retryAfterSeconds"); after.Num() > 0 {
		p.facts.k8s = waitFromJSON(after, 1e9)
	}
	for it := details.Member("causes").Iter(); it.Next(); {
		c := it.Val()
		field := c.Member("field").Str()
		if field == "" {
			continue // a cause without a field restates the message
		}
		p.addIssue(Issue{Path: toPointer(field), Code: c.Member("reason").Str(), Message: c.Member("message").Str()})
	}
	if e.Code == "" {
		e.Code = "Unknown"
	}
	return DialectKubernetes
}
