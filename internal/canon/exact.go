package canon

import "strconv"

// appendExact writes the number literal lit, which the JSON grammar has already accepted, by
// its exact decimal value: the significant digits of the literal, placed as ECMAScript places
// the digits of a double (see appendNumber). Where the literal is a double that the shortest
// round-tripping digits spell exactly, as nearly every number in a payload is, the output is
// the RFC 8785 form; elsewhere it keeps every digit the literal has and a double would lose.
//
// It works on the text alone, in time linear in len(lit) and with output no longer than
// len(lit) plus a few bytes: an exponent of any length is added to, never expanded, so that
// 1e999999999 costs what 1e9 does and differs from 1e999999998. Zero keeps its sign: -0 is
// written "-0", since a float64 bound from it is not the 0 that 0 binds to.
func appendExact(dst, lit []byte) []byte {
	neg := lit[0] == '-'
	if neg {
		lit = lit[1:]
	}
	i := 0
	for i < len(lit) && isDigit(lit, i) {
		i++
	}
	intPart := lit[:i]
	var frac []byte
	if i < len(lit) && lit[i] == '.' {
		j := i + 1
		for isDigit(lit, j) {
			j++
		}
		frac = lit[i+1 : j]
		i = j
	}
	expNeg, exp := false, []byte(nil)
	if i < len(lit) { // 'e' or 'E'
		i++
		switch lit[i] {
		case '-':
			expNeg = true
			i++
		case '+':
			i++
		}
		exp = lit[i:]
		for len(exp) > 0 && exp[0] == '0' {
			exp = exp[1:]
		}
	}

	// The significant digits are those of intPart and frac together, from the first non-zero
	// one to the last: d = hi followed by lo.
	d := digits{hi: intPart, lo: frac}
	for len(d.hi) > 0 && d.hi[0] == '0' {
		d.hi = d.hi[1:]
	}
	lead := len(intPart) - len(d.hi) // zeros before the first significant digit
	if len(d.hi) == 0 {
		for len(d.lo) > 0 && d.lo[0] == '0' {
			d.lo = d.lo[1:]
		}
		lead += len(frac) - len(d.lo)
	}
	for len(d.lo) > 0 && d.lo[len(d.lo)-1] == '0' {
		d.lo = d.lo[:len(d.lo)-1]
	}
	if len(d.lo) == 0 {
		for len(d.hi) > 0 && d.hi[len(d.hi)-1] == '0' {
			d.hi = d.hi[:len(d.hi)-1]
		}
	}
	if neg {
		dst = append(dst, '-')
	}
	k := len(d.hi) + len(d.lo)
	if k == 0 {
		return append(dst, '0') // whatever its exponent
	}

	// The value is 0.d × 10^n, with n = len(intPart) - lead + the exponent. shift, the part the
	// text's layout contributes, is bounded by the length of the literal.
	shift := int64(len(intPart) - lead)
	if len(exp) > maxSmallExp {
		// An exponent this long puts n far outside -6 < n <= 21: the exponent form, with the
		// exponent n-1 computed on its digits.
		dst = d.append(dst, 0, 1)
		if k > 1 {
			dst = append(dst, '.')
			dst = d.append(dst, 1, k)
		}
		dst = append(dst, 'e')
		delta := shift - 1
		if expNeg {
			dst = append(dst, '-')
			delta = -delta
		} else {
			dst = append(dst, '+')
		}
		return addSmall(dst, exp, delta)
	}
	e := int64(0)
	for _, b := range exp {
		e = e*10 + int64(b-'0')
	}
	if expNeg {
		e = -e
	}
	n := shift + e
	switch {
	case int64(k) <= n && n <= 21:
		dst = d.append(dst, 0, k)
		for range n - int64(k) {
			dst = append(dst, '0')
		}
	case 0 < n && n <= 21:
		dst = d.append(dst, 0, int(n))
		dst = append(dst, '.')
		dst = d.append(dst, int(n), k)
	case -6 < n && n <= 0:
		dst = append(dst, '0', '.')
		for range -n {
			dst = append(dst, '0')
		}
		dst = d.append(dst, 0, k)
	default:
		dst = d.append(dst, 0, 1)
		if k > 1 {
			dst = append(dst, '.')
			dst = d.append(dst, 1, k)
		}
		dst = append(dst, 'e')
		if n-1 >= 0 {
			dst = append(dst, '+')
		}
		dst = strconv.AppendInt(dst, n-1, 10)
	}
	return dst
}

// maxSmallExp is the longest exponent (without leading zeros) read into an int64. Added to a
// shift no longer than the literal, it cannot overflow; a longer one is added to as text.
const maxSmallExp = 15

// digits is a run of significant digits that a literal may split with its decimal point.
type digits struct{ hi, lo []byte }

// append writes the digits from index i up to j.
func (d digits) append(dst []byte, i, j int) []byte {
	if i < len(d.hi) {
		dst = append(dst, d.hi[i:min(j, len(d.hi))]...)
	}
	if j > len(d.hi) {
		dst = append(dst, d.lo[max(i-len(d.hi), 0):j-len(d.hi)]...)
	}
	return dst
}

// addSmall writes the decimal digits of mag + delta, where mag is a number of more than
// maxSmallExp digits without leading zeros and |delta| is far below it (bounded by the length
// of a literal), so that the sum is positive and has at most one digit more than mag.
func addSmall(dst, mag []byte, delta int64) []byte {
	start := len(dst)
	dst = append(dst, '0') // room for a carry out of the first digit
	dst = append(dst, mag...)
	sum := dst[start:]
	if delta >= 0 {
		carry := delta
		for i := len(sum) - 1; carry > 0; i-- {
			v := int64(sum[i]-'0') + carry%10
			carry /= 10
			if v >= 10 {
				v -= 10
				carry++
			}
			sum[i] = byte('0' + v)
		}
	} else {
		borrow := -delta
		for i := len(sum) - 1; borrow > 0; i-- {
			v := int64(sum[i]-'0') - borrow%10
			borrow /= 10
			if v < 0 {
				v += 10
				borrow++
			}
			sum[i] = byte('0' + v)
		}
	}
	z := 0
	for sum[z] == '0' {
		z++
	}
	return append(dst[:start], sum[z:]...) // a copy within dst, moving left
}
