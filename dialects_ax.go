package remedy

// The AX shape: error_code, message, suggestion, details.

func (p *parser) readAX() Dialect {
	if !p.top.errorCode.IsString() {
		return ""
	}
	for it := p.top.root.iter(); it.next(); {
		p.agentField(it.Key(), it.val())
	}
	p.flushField()
	return DialectAX
}
