package main

import (
	"fmt"
	"html"
	"io"
	"math"
	"strings"
)

// Chart geometry, in pixels.
const (
	chartWidth  = 980
	labelRight  = 400 // labels end here
	plotLeft    = 410
	plotWidth   = 460
	valueLeft   = plotLeft + plotWidth + 14
	rowHeight   = 18
	barHeight   = 12
	chartTop    = 74 // the first row
	bottomSpace = 44 // the axis labels
	fasterColor = "#2a9d8f"
	slowerColor = "#e76f51"
)

// WriteSVG draws the ratios as a horizontal bar chart on a log scale, grouped as they come,
// each bar drawn from the 1.0 line: left of it the first side is faster, right of it slower.
func WriteSVG(w io.Writer, title string, ratios []Ratio) error {
	lo, hi := 0.5, 2.0
	for _, r := range ratios {
		lo, hi = min(lo, r.Value), max(hi, r.Value)
	}
	loExp, hiExp := math.Floor(math.Log2(lo)), math.Ceil(math.Log2(hi))
	x := func(v float64) float64 {
		return plotLeft + (math.Log2(v)-loExp)/(hiExp-loExp)*plotWidth
	}

	rows := 0
	var last *Group
	for _, r := range ratios {
		if r.Group != last {
			rows++
			last = r.Group
		}
		rows++
	}
	height := chartTop + rows*rowHeight + bottomSpace

	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	p(`<?xml version="1.0" encoding="UTF-8"?>` + "\n")
	p(`<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="-apple-system, 'Segoe UI', Helvetica, Arial, sans-serif" font-size="12">`+"\n",
		chartWidth, height, chartWidth, height)
	p(`<rect width="100%%" height="100%%" fill="#ffffff"/>` + "\n")
	p(`<text x="16" y="24" font-size="15" font-weight="bold">%s</text>`+"\n", esc(title))
	p(`<text x="16" y="44" fill="#555555">Median time per operation of one side over the other, log scale. Left of 1×: the first side is faster.</text>` + "\n")
	p(`<rect x="%d" y="52" width="10" height="10" fill="%s"/><text x="%d" y="61">faster</text>`+"\n", plotLeft, fasterColor, plotLeft+14)
	p(`<rect x="%d" y="52" width="10" height="10" fill="%s"/><text x="%d" y="61">slower</text>`+"\n", plotLeft+70, slowerColor, plotLeft+84)

	plotBottom := chartTop + rows*rowHeight
	for e := loExp; e <= hiExp; e++ {
		v := math.Exp2(e)
		gx := x(v)
		stroke, width := "#dddddd", 1.0
		if e == 0 {
			stroke, width = "#333333", 1.5
		}
		p(`<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="%s" stroke-width="%.1f"/>`+"\n", gx, chartTop-4, gx, plotBottom, stroke, width)
		p(`<text x="%.1f" y="%d" text-anchor="middle" fill="#555555">%s×</text>`+"\n", gx, plotBottom+16, trimFloat(v))
	}
	p(`<text x="%d" y="%d" text-anchor="middle" fill="#555555">time ratio (1× = as fast)</text>`+"\n", plotLeft+plotWidth/2, plotBottom+34)

	y := chartTop
	last = nil
	one := x(1)
	for _, r := range ratios {
		if r.Group != last {
			p(`<text x="16" y="%d" font-weight="bold">%s</text>`+"\n", y+barHeight, esc(r.Group.Title))
			y += rowHeight
			last = r.Group
		}
		label := r.CaseLabel()
		bx := x(r.Value)
		left, width := math.Min(one, bx), math.Max(math.Abs(bx-one), 1)
		color := fasterColor
		if r.Value > 1 {
			color = slowerColor
		}
		p(`<text x="%d" y="%d" text-anchor="end">%s</text>`+"\n", labelRight, y+barHeight-2, esc(label))
		p(`<rect class="bar" x="%.1f" y="%d" width="%.1f" height="%d" fill="%s"><title>%s: %s</title></rect>`+"\n",
			left, y, width, barHeight, color, esc(r.Label()), formatRatio(r.Value))
		p(`<text x="%d" y="%d">%s</text>`+"\n", valueLeft, y+barHeight-2, formatRatio(r.Value))
		y += rowHeight
	}
	p("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// esc escapes text for XML.
func esc(s string) string { return html.EscapeString(s) }

// trimFloat writes a power of two without trailing zeros: 0.25, 0.5, 1, 2.
func trimFloat(v float64) string {
	return strings.TrimRight(strings.TrimRight(fmt.Sprintf("%.4f", v), "0"), ".")
}
