package remedy

// Anthropic's API: {type: error, error: {type, message}}.

func (p *parser) readAnthropic() Dialect {
	obj := p.top.error
	if p.top.typ.Str() != "error" || !obj.IsObject() {
		return ""
	}
	p.e.Code = obj.Member("type").Str()
	p.e.Message = obj.Member("message").Str()
	p.e.RequestID = p.top.requestID.Str()
	return DialectAnthropic
}
