//go:build !race

package remedy

const raceBuild = false
