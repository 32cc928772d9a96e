package testweb

import (
	"html"
	"math/rand/v2"
	"strings"
)

// link is an anchor on a page. href may be relative; nofollow marks rel="nofollow".
type link struct {
	href, text string
	nofollow   bool
}

// doc is a page to render.
type doc struct {
	title      string
	paragraphs []string
	links      []link
	head       string // extra <head> markup: <base>, canonical, meta robots
}

var words = strings.Fields(`the of and to in is was for on that with as by at from his her
this be are or it an which had not but were have their they one all been has more when
there who would into time only its new some could these two may first then do any like other
than now people my made over did down way find use water long little very after words called
just where most know get through back much before go good new write our used me man too any
day same right look think also around another came come work three word must because does
part even place well such here take why things help put years different away again off went
old number great tell men say small every found still between name should home big give air
line set own under read last never us left end along while might next sound below saw
something thought both few those always looked show large often together asked house world
going want school important until form food keep children feet land side without boy once
animals life enough took sometimes four head above kind began almost live page got earth need
far hand high year mother light parts country father let night following picture being study
second eyes soon times story boys since white days ever paper hard near sentence better best
across during today others however sure means knew its try told young miles sun ways thing
whole hear example heard several change answer room sea against top turned learn point city
play toward five using himself usually river harbour crawler ledger garden orchard lantern`)

// text returns n pseudo-random words.
func text(r *rand.Rand, n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(words[r.IntN(len(words))])
	}
	return b.String()
}

// paragraphs returns between min and max paragraphs of 40 to 90 words.
func paragraphs(r *rand.Rand, min, max int) []string {
	n := min + r.IntN(max-min+1)
	out := make([]string, n)
	for i := range out {
		s := text(r, 40+r.IntN(51))
		out[i] = strings.ToUpper(s[:1]) + s[1:] + "."
	}
	return out
}

func (d doc) render() []byte {
	var b strings.Builder
	b.Grow(4096)
	b.WriteString("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>")
	b.WriteString(html.EscapeString(d.title))
	b.WriteString("</title>\n")
	b.WriteString(d.head)
	b.WriteString("</head>\n<body>\n<nav><a href=\"/\">Home</a></nav>\n<h1>")
	b.WriteString(html.EscapeString(d.title))
	b.WriteString("</h1>\n")
	for i, p := range d.paragraphs {
		b.WriteString("<p>")
		b.WriteString(html.EscapeString(p))
		b.WriteString("</p>\n")
		if i == 0 && len(d.links) > 0 {
			b.WriteString("<ul>\n")
			for _, l := range d.links {
				b.WriteString("<li><a href=\"")
				b.WriteString(html.EscapeString(l.href))
				b.WriteString("\"")
				if l.nofollow {
					b.WriteString(" rel=\"nofollow\"")
				}
				b.WriteString(">")
				b.WriteString(html.EscapeString(l.text))
				b.WriteString("</a></li>\n")
			}
			b.WriteString("</ul>\n")
		}
	}
	b.WriteString("<footer>Served by the Trawler test web.</footer>\n</body>\n</html>\n")
	return []byte(b.String())
}

// rng returns a generator fixed by the web's seed and the given keys.
func rng(seed uint64, keys ...uint64) *rand.Rand {
	h := seed ^ 0x9e3779b97f4a7c15
	for _, k := range keys {
		h = (h ^ k) * 0xbf58476d1ce4e5b9
		h ^= h >> 31
	}
	return rand.New(rand.NewPCG(h, seed))
}
