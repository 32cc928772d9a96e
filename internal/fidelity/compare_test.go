package fidelity

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"math"
	"testing"

	"github.com/trawlerdev/trawler/internal/render"
)

func shot(t *testing.T, w, h int, paint func(x, y int) color.Color) []byte {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			img.Set(x, y, paint(x, y))
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// The pixel share counts pixels within the tolerance as matching, a pixel one image lacks as
// not; the text share is the overlap of word counts.
func TestCompare(t *testing.T) {
	white := func(int, int) color.Color { return color.White }
	half := func(x, _ int) color.Color {
		if x < 50 {
			return color.Black
		}
		return color.RGBA{250, 250, 250, 255} // within the tolerance of white
	}
	for _, c := range []struct {
		name                 string
		live, replay         *render.Seen
		pixels, text, scored float64
	}{
		{"same", &render.Seen{PNG: shot(t, 100, 10, white), Text: "A b c"}, &render.Seen{PNG: shot(t, 100, 10, white), Text: "a B  c"}, 1, 1, 1},
		{"half dark, half near", &render.Seen{PNG: shot(t, 100, 10, white), Text: "a b c d"}, &render.Seen{PNG: shot(t, 100, 10, half), Text: "a b"}, 0.5, 2 * 2.0 / 6, (0.5 + 4.0/6) / 2},
		{"shorter replay", &render.Seen{PNG: shot(t, 100, 10, white), Text: ""}, &render.Seen{PNG: shot(t, 100, 5, white), Text: ""}, 0.5, 1, 0.75},
		{"nothing shared", &render.Seen{PNG: shot(t, 10, 10, white), Text: "x"}, &render.Seen{PNG: shot(t, 10, 10, func(int, int) color.Color { return color.Black }), Text: "y"}, 0, 0, 0},
	} {
		s, err := Compare(c.live, c.replay)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if math.Abs(s.Pixels-c.pixels) > 1e-9 || math.Abs(s.Text-c.text) > 1e-9 || math.Abs(s.Score-c.scored) > 1e-9 {
			t.Errorf("%s: %+v, want pixels %.3f text %.3f score %.3f", c.name, s, c.pixels, c.text, c.scored)
		}
	}
	if _, err := Compare(&render.Seen{PNG: []byte("not a png")}, &render.Seen{PNG: shot(t, 1, 1, white)}); err == nil {
		t.Error("a broken screenshot compared")
	}
}
