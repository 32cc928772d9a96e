package dedup

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// ArticleDoc is one generated short news article: its text, its cluster (the number of the
// document it duplicates, or its own) and what kind of document it is.
type ArticleDoc struct {
	Text    string
	Cluster int
	Variant string // original, dateline, ad, sentence, copy, follow-up, other
}

// GenerateArticles builds a labelled set of short news articles (about 300 words) as a news
// site serves them, for near-duplicate precision and recall where short texts make every edit
// count: each original comes back as the same story with a changed dateline, with a changed ad
// line, with one sentence of one paragraph rewritten, and as an exact copy under another URL
// (all duplicates of it); hard negatives are follow-up stories that reuse two of an original's
// paragraphs, and unrelated stories on the same template. clusters originals are made.
func GenerateArticles(seed uint64, clusters int) []ArticleDoc {
	r := rand.New(rand.NewPCG(seed, 0x6e657773))
	vocab := make([]string, 8000)
	for i := range vocab {
		vocab[i] = fmt.Sprintf("%s%s%d", syllables[i%len(syllables)], syllables[(i/len(syllables))%len(syllables)], i)
	}
	zipf := rand.NewZipf(r, 1.07, 2, uint64(len(vocab)-1))
	cities := []string{"LONDON", "PARIS", "BERLIN", "MADRID", "ROME", "OSLO", "LISBON", "VIENNA", "DUBLIN", "PRAGUE"}
	months := []string{"Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"}
	sentence := func() string {
		w := make([]string, 12+r.IntN(11))
		for i := range w {
			w[i] = vocab[zipf.Uint64()]
		}
		return strings.Join(w, " ") + "."
	}
	paragraph := func() []string {
		p := make([]string, 2+r.IntN(3))
		for i := range p {
			p[i] = sentence()
		}
		return p
	}
	dateline := func() string {
		return fmt.Sprintf("%s, %s %d (Trawler News) -", cities[r.IntN(len(cities))], months[r.IntN(12)], 1+r.IntN(28))
	}
	ad := func() string { return "Advertisement: " + strings.TrimSuffix(sentence(), ".") }
	const footer = "Reporting by the news desk; editing by the copy desk. Our standards: the trust principles. Share this article. Read more."
	type article struct {
		dateline, ad string
		paras        [][]string
	}
	render := func(a article) string {
		var b strings.Builder
		b.WriteString(a.dateline)
		for i, p := range a.paras {
			b.WriteString("\n\n")
			b.WriteString(strings.Join(p, " "))
			if i == 1 {
				b.WriteString("\n\n" + a.ad)
			}
		}
		b.WriteString("\n\n" + footer)
		return b.String()
	}
	newArticle := func() article {
		a := article{dateline: dateline(), ad: ad()}
		for words := 0; words < 280; {
			p := paragraph()
			a.paras = append(a.paras, p)
			words += len(strings.Fields(strings.Join(p, " ")))
		}
		return a
	}
	copyOf := func(a article) article {
		c := a
		c.paras = make([][]string, len(a.paras))
		for i, p := range a.paras {
			c.paras[i] = append([]string(nil), p...)
		}
		return c
	}
	var docs []ArticleDoc
	var originals []article
	add := func(a article, cluster int, variant string) {
		docs = append(docs, ArticleDoc{Text: render(a), Cluster: cluster, Variant: variant})
	}
	for c := 0; c < clusters; c++ {
		o := newArticle()
		id := len(docs)
		add(o, id, "original")
		originals = append(originals, o)
		v := copyOf(o)
		v.dateline = dateline()
		add(v, id, "dateline")
		v = copyOf(o)
		v.ad = ad()
		add(v, id, "ad")
		v = copyOf(o)
		p := r.IntN(len(v.paras))
		v.paras[p][r.IntN(len(v.paras[p]))] = sentence()
		add(v, id, "sentence")
		add(copyOf(o), id, "copy")
		// Hard negatives: a follow-up reusing two of a (random earlier) original's paragraphs,
		// and an unrelated story on the same template.
		src := originals[r.IntN(len(originals))]
		f := newArticle()
		f.paras = append([][]string{src.paras[0], src.paras[len(src.paras)-1]}, f.paras[:max(len(f.paras)-2, 1)]...)
		add(f, len(docs), "follow-up")
		add(newArticle(), len(docs), "other")
	}
	return docs
}
