package remedy

// OAuth 2.0's error response (RFC 6749 5.2): error, error_description, error_uri.

var oauthCodes = map[string]bool{
	"invalid_request": true, "invalid_client": true, "invalid_grant": true, "unauthorized_client": true,
	"unsupported_grant_type": true, "invalid_scope": true, "invalid_token": true, "insufficient_scope": true,
	"access_denied": true, "unsupported_response_type": true, "server_error": true,
	"temporarily_unavailable": true, "authorization_pending": true, "slow_down": true, "expired_token": true,
}

func (p *parser) readOAuth2() Dialect {
	t := &p.top
	code := t.error.Str()
	if !t.error.IsString() || !(t.errorDescription.Exists() || t.errorURI.Exists() || oauthCodes[code]) {
		return ""
	}
	p.e.Code = code
	p.e.Message = t.errorDescription.Str()
	p.e.DocsURL = t.errorURI.Str()
	return DialectOAuth2
}
