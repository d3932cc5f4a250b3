package remedy

// SchemaCheck says what the loop does, before a call's first attempt, with arguments that
// break the call's Schema (an Operation's Parameters, an MCP tool's input schema).
type SchemaCheck uint8

const (
	// CheckRepair, the default, repairs arguments that break the schema before anything is
	// sent, when the Rewriter repairs every violation without changing what the call means
	// (a lossy repair is put to the RewritePolicy, as after a failure); arguments it cannot
	// so repair are sent as they are, and the server's answer decides: a published schema may
	// be older than the server it describes, and a call the server would accept is not
	// refused on the schema's word alone.
	CheckRepair SchemaCheck = iota
	// CheckStrict repairs as CheckRepair does, and stops the call before sending arguments
	// that still break the schema, with ErrInvalidArguments, the violations (CallError.Err is
	// an *ArgumentsError), and the refused proposal or the issues no rule could address.
	CheckStrict
	// CheckOff sends the arguments unchecked; the schema still helps the Rewriter after a
	// failure.
	CheckOff
)
