package remedy

import "encoding/json"

// quoteJSON encodes s as a JSON string.
func quoteJSON(s string) json.RawMessage { return appendString(nil, s) }
