package remedy

// The AX shape: error_code, message, suggestion, details.

func (p *parser) readAX() Dialect {
	if !p.top.errorCode.IsString() {
		return ""
	}
	for it := p.top.root.Iter(); it.Next(); {
		p.agentField(it.Key(), it.Val())
	}
	p.flushField()
	return DialectAX
}
