//go:build !race

package tape

const raceBuild = false
