package rewrite

// SJSONPath exposes the pointer-to-sjson-path conversion to its table test.
var SJSONPath = sjsonPath
