package dedup

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// CorpusDoc is one generated document and the cluster it belongs to (its original's number;
// an original is its own cluster).
type CorpusDoc struct {
	Text    string
	Cluster int
}

// GenerateCorpus builds a labelled corpus of n documents for measuring precision and recall:
// originals of 300–700 words drawn from a shared Zipf-like vocabulary and sharing a site-wide
// boilerplate sentence; near-duplicates of an original with 1–5 words replaced, inserted or
// deleted (what a changed date, counter or ad slot does to a page); and hard negatives that
// reuse half of an original (a different article on the same template) and must not match.
func GenerateCorpus(seed uint64, n int) []CorpusDoc {
	r := rand.New(rand.NewPCG(seed, 0x636f72707573))
	vocab := make([]string, 20000)
	for i := range vocab {
		vocab[i] = fmt.Sprintf("%s%d", syllables[i%len(syllables)], i)
	}
	zipf := rand.NewZipf(r, 1.1, 1, uint64(len(vocab)-1))
	boiler := strings.Fields("skip to content home about contact privacy terms all rights reserved subscribe to our newsletter")
	words := func(k int) []string {
		w := make([]string, k)
		for i := range w {
			w[i] = vocab[zipf.Uint64()]
		}
		return w
	}
	var docs []CorpusDoc
	var originals [][]string
	var originalDoc []int // originals[i] is document originalDoc[i]
	for len(docs) < n {
		switch k := r.IntN(10); {
		case k < 5 || len(originals) == 0: // an original
			w := append(append([]string(nil), boiler...), words(300+r.IntN(400))...)
			originals, originalDoc = append(originals, w), append(originalDoc, len(docs))
			docs = append(docs, CorpusDoc{Text: strings.Join(w, " "), Cluster: len(docs)})
		case k < 9: // a near-duplicate of a recent original
			o := r.IntN(len(originals))
			w := append([]string(nil), originals[o]...)
			for e := 1 + r.IntN(5); e > 0; e-- {
				i := r.IntN(len(w))
				switch r.IntN(3) {
				case 0:
					w[i] = vocab[r.IntN(len(vocab))]
				case 1:
					w = append(w[:i], append([]string{vocab[r.IntN(len(vocab))]}, w[i:]...)...)
				default:
					w = append(w[:i], w[i+1:]...)
				}
			}
			docs = append(docs, CorpusDoc{Text: strings.Join(w, " "), Cluster: originalDoc[o]})
		default: // a hard negative: half of an original, half new
			o := originals[r.IntN(len(originals))]
			w := append(append([]string(nil), o[:len(o)/2]...), words(len(o)-len(o)/2)...)
			originals, originalDoc = append(originals, w), append(originalDoc, len(docs))
			docs = append(docs, CorpusDoc{Text: strings.Join(w, " "), Cluster: len(docs)})
		}
	}
	return docs
}

var syllables = []string{"ka", "lo", "mi", "ne", "su", "ta", "ri", "po", "de", "va", "gu", "ze"}
