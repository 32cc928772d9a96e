// Package fidelity owns the replay fidelity score: how much a page replayed from a crawl's
// captures alone looks like the same page rendered live by the same browser, in the same
// viewport — the share of the viewport's pixels that match and the overlap of the visible
// text, as Browsertrix's QA compares a replay with its crawl. It samples a crawl's archived
// pages, looks at each twice (render.Browser.Look), and records the scores for the report.
package fidelity

import (
	"bytes"
	"fmt"
	"image"
	"image/png"
	"strings"

	"github.com/trawlerdev/trawler/internal/render"
)

// Score is how much a replay looks like the live page, each from 0 to 1.
type Score struct {
	Pixels float64 // share of the viewport's pixels that match
	Text   float64 // overlap of the visible words (Dice over word counts)
	Score  float64 // their mean
}

// pixelTolerance is the most a channel may differ (of 255) for two pixels to match: the same
// browser draws the same bytes the same way, but an image decoded twice may round apart.
const pixelTolerance = 16

// Compare scores a replay against the live page.
func Compare(live, replay *render.Seen) (Score, error) {
	px, err := pixels(live.PNG, replay.PNG)
	if err != nil {
		return Score{}, err
	}
	tx := words(live.Text, replay.Text)
	return Score{Pixels: px, Text: tx, Score: (px + tx) / 2}, nil
}

// pixels is the share of matching pixels over the larger of the two images: a pixel one
// image lacks does not match.
func pixels(a, b []byte) (float64, error) {
	ia, err := png.Decode(bytes.NewReader(a))
	if err != nil {
		return 0, fmt.Errorf("fidelity: the live screenshot: %w", err)
	}
	ib, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		return 0, fmt.Errorf("fidelity: the replay's screenshot: %w", err)
	}
	ra, rb := ia.Bounds(), ib.Bounds()
	w, h := max(ra.Dx(), rb.Dx()), max(ra.Dy(), rb.Dy())
	if w == 0 || h == 0 {
		return 1, nil
	}
	both := image.Rect(0, 0, min(ra.Dx(), rb.Dx()), min(ra.Dy(), rb.Dy()))
	var same int
	for y := both.Min.Y; y < both.Max.Y; y++ {
		for x := both.Min.X; x < both.Max.X; x++ {
			if alike(ia.At(ra.Min.X+x, ra.Min.Y+y), ib.At(rb.Min.X+x, rb.Min.Y+y)) {
				same++
			}
		}
	}
	return float64(same) / float64(w*h), nil
}

// alike says whether two colours are within pixelTolerance on every channel.
func alike(p, q interface{ RGBA() (r, g, b, a uint32) }) bool {
	r1, g1, b1, a1 := p.RGBA()
	r2, g2, b2, a2 := q.RGBA()
	for _, d := range [4][2]uint32{{r1, r2}, {g1, g2}, {b1, b2}, {a1, a2}} {
		x, y := d[0]>>8, d[1]>>8
		if x > y+pixelTolerance || y > x+pixelTolerance {
			return false
		}
	}
	return true
}

// words is the Dice overlap of two texts' word counts: 1 for the same words, 0 for none shared.
func words(a, b string) float64 {
	ca, cb := count(a), count(b)
	na, nb := 0, 0
	for _, n := range ca {
		na += n
	}
	for _, n := range cb {
		nb += n
	}
	if na+nb == 0 {
		return 1
	}
	shared := 0
	for w, n := range ca {
		shared += min(n, cb[w])
	}
	return 2 * float64(shared) / float64(na+nb)
}

func count(s string) map[string]int {
	m := map[string]int{}
	for _, w := range strings.Fields(strings.ToLower(s)) {
		m[w]++
	}
	return m
}
