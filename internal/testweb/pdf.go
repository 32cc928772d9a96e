package testweb

import (
	"bytes"
	"compress/zlib"
	"fmt"
	"strings"
)

// PDF renders a small valid PDF: one page per entry of pages (its lines of text, in
// Helvetica), and on the first page a URI link annotation for each of links.
func PDF(pages [][]string, links []string) []byte {
	var objs []string
	add := func(s string) int { objs = append(objs, s); return len(objs) }
	add("<< /Type /Catalog /Pages 2 0 R >>")
	add("") // the page tree, once its kids are known
	font := add("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
	var annots []string
	for i, l := range links {
		y := 100 + 20*i
		annots = append(annots, fmt.Sprintf("%d 0 R", add(fmt.Sprintf(
			"<< /Type /Annot /Subtype /Link /Rect [72 %d 300 %d] /Border [0 0 0] /A << /S /URI /URI (%s) >> >>", y, y+15, pdfString(l)))))
	}
	var kids []string
	for i, lines := range pages {
		var content strings.Builder
		content.WriteString("BT /F1 12 Tf 72 760 Td 14 TL\n")
		for _, line := range lines {
			fmt.Fprintf(&content, "(%s) Tj T*\n", pdfString(line))
		}
		content.WriteString("ET\n")
		stream := add(fmt.Sprintf("<< /Length %d >>\nstream\n%sendstream", content.Len(), content.String()))
		page := fmt.Sprintf("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents %d 0 R /Resources << /Font << /F1 %d 0 R >> >>",
			stream, font)
		if i == 0 && len(annots) > 0 {
			page += " /Annots [" + strings.Join(annots, " ") + "]"
		}
		kids = append(kids, fmt.Sprintf("%d 0 R", add(page+" >>")))
	}
	objs[1] = fmt.Sprintf("<< /Type /Pages /Kids [%s] /Count %d >>", strings.Join(kids, " "), len(kids))
	return pdfFile(objs)
}

// pdfFile lays out objects (numbered from 1; the first is the catalog) with their xref table.
func pdfFile(objs []string) []byte {
	var b bytes.Buffer
	b.WriteString("%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
	offsets := make([]int, len(objs))
	for i, o := range objs {
		offsets[i] = b.Len()
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", i+1, o)
	}
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(objs)+1)
	for _, off := range offsets {
		fmt.Fprintf(&b, "%010d 00000 n \n", off)
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(objs)+1, xref)
	return b.Bytes()
}

// pdfString escapes a PDF literal string's delimiters.
func pdfString(s string) string {
	return strings.NewReplacer(`\`, `\\`, "(", `\(`, ")", `\)`).Replace(s)
}

// PDFBomb is a PDF whose one content stream is small deflated and inflates to n bytes: one
// string shown on the page, so a reader that lexes the stream holds all n bytes in memory at
// once (600 MiB of it took pdftotext past 1 GB of RSS): a compression bomb for a PDF reader's
// memory, which only a memory limit on the reader stops.
func PDFBomb(n int) []byte {
	var raw bytes.Buffer
	zw, _ := zlib.NewWriterLevel(&raw, zlib.BestCompression)
	_, _ = zw.Write([]byte("BT /F1 12 Tf 72 700 Td ("))
	chunk := bytes.Repeat([]byte("A"), 1<<16)
	for written := 0; written < n; written += len(chunk) {
		_, _ = zw.Write(chunk)
	}
	_, _ = zw.Write([]byte(") Tj ET\n"))
	_ = zw.Close()
	return pdfFile([]string{
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>",
		fmt.Sprintf("<< /Length %d /Filter /FlateDecode >>\nstream\n%s\nendstream", raw.Len(), raw.String()),
		"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
	})
}

// PDFManyPages claims count pages in its page tree, all the one same page object: a reader
// that walks every page does count times the work.
func PDFManyPages(count int) []byte {
	doc := PDF([][]string{{"The only page, counted many times."}}, nil)
	// Point the tree at the one page object count times (object 5: catalog, tree, font, the
	// page's stream, then the page). The objects after the tree move, so the xref table is
	// off too: the reader must rebuild it.
	kids := strings.TrimSuffix(strings.Repeat("5 0 R ", count), " ")
	return bytes.Replace(doc, []byte("/Kids [5 0 R] /Count 1"), []byte(fmt.Sprintf("/Kids [%s] /Count %d", kids, count)), 1)
}
