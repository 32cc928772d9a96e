package content

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/trawlerdev/trawler/internal/confine"
)

// PDF text and links come from poppler's pdftotext and pdfinfo (Debian's poppler-utils) run as
// child processes, not from a Go library in the worker, for two reasons. poppler reads the
// PDFs of the real web (broken xref tables rebuilt, every filter and font encoding) where the
// Go readers give up or give garbled text; and a hostile PDF (a compression bomb, a page tree
// of millions of pages, a parser bug) costs a child process its limits, never the worker: each
// child runs under an address-space and CPU-time limit, a wall-clock timeout and a cap on its
// output, and reads only the first PDFLimits.Pages pages. The limits are set by package
// confine (setrlimit in a re-exec of the worker), so they hold whatever /bin/sh is.

// PDFLimits bound the work on one PDF.
type PDFLimits struct {
	Pages    int           // pages read (first ones)
	Timeout  time.Duration // wall clock per child process
	MemoryMB int           // address space per child process
	// RequireIsolation refuses to read a PDF where its reader cannot have a network
	// namespace of its own (the PDF is stored, not read, with the reason).
	RequireIsolation bool
}

// DefaultPDFLimits suit ordinary documents: reports, papers and manuals read in well under a
// second a page.
var DefaultPDFLimits = PDFLimits{Pages: 200, Timeout: 20 * time.Second, MemoryMB: 512}

// orDefaults fills each unset (or nonsensical) limit with DefaultPDFLimits' own: a zero memory
// limit would otherwise mean none at all.
func (l PDFLimits) orDefaults() PDFLimits {
	if l.Pages <= 0 {
		l.Pages = DefaultPDFLimits.Pages
	}
	if l.Timeout <= 0 {
		l.Timeout = DefaultPDFLimits.Timeout
	}
	if l.MemoryMB <= 0 {
		l.MemoryMB = DefaultPDFLimits.MemoryMB
	}
	return l
}

// PDFDoc is what a PDF yields.
type PDFDoc struct {
	Title string
	Text  string
	Links []string // URI link annotations, as written, first pages first
}

// ErrNoPDFTools says poppler-utils is not installed: PDFs are stored but not read.
var ErrNoPDFTools = errors.New("content: pdftotext/pdfinfo not installed (Debian: poppler-utils)")

// ReadPDF extracts a PDF's text and URI links within lim. An error fails that document only.
func ReadPDF(ctx context.Context, body []byte, lim PDFLimits) (*PDFDoc, error) {
	if _, err := exec.LookPath("pdftotext"); err != nil {
		return nil, ErrNoPDFTools
	}
	if _, err := exec.LookPath("pdfinfo"); err != nil {
		return nil, ErrNoPDFTools
	}
	lim = lim.orDefaults()
	pages := strconv.Itoa(lim.Pages)
	text, err := runLimited(ctx, body, lim, MaxTextBytes, "pdftotext", "-l", pages, "-enc", "UTF-8", "-", "-")
	if err != nil {
		return nil, fmt.Errorf("pdf text: %w", err)
	}
	doc := &PDFDoc{Text: capRunes(strings.TrimSpace(strings.ToValidUTF8(strings.ReplaceAll(text, "\x00", ""), "\uFFFD")), MaxTextBytes)}
	for _, line := range strings.SplitN(doc.Text, "\n", 50) {
		if line = strings.TrimSpace(line); line != "" {
			doc.Title = capRunes(line, 200)
			break
		}
	}
	// Links: "Page  Type  URL" rows of pdfinfo -url. A PDF whose links cannot be listed still
	// has its text.
	out, err := runLimited(ctx, body, lim, 4<<20, "pdfinfo", "-url", "-l", pages, "-")
	if err != nil {
		return doc, nil
	}
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) >= 3 && f[0] != "Page" {
			doc.Links = append(doc.Links, f[len(f)-1])
		}
	}
	return doc, nil
}

// runLimited runs a poppler tool on body (its stdin) under lim and returns at most maxOut
// bytes of its output; more output, a timeout, a limit hit or a failure is an error.
func runLimited(ctx context.Context, body []byte, lim PDFLimits, maxOut int, name string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, lim.Timeout)
	defer cancel()
	// Limits set by setrlimit in a re-exec of the worker (package confine), not by a shell:
	// address space and CPU seconds hold whatever the PDF makes poppler do, it writes no
	// file, and it sees none of the worker's environment.
	cmd, err := confine.Command(ctx, confine.Limits{MemoryBytes: uint64(lim.MemoryMB) << 20,
		CPUSeconds: uint64(max(int(lim.Timeout/time.Second), 1)), FileBytes: 1, OpenFiles: 64, RequireOffline: lim.RequireIsolation}, name, args...)
	if err != nil {
		return "", err
	}
	cmd.Stdin = bytes.NewReader(body)
	cmd.WaitDelay = time.Second
	var stderr bytes.Buffer
	cmd.Stderr = &limitedBuffer{max: 4096, buf: &stderr}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return "", err
	}
	if err := cmd.Start(); err != nil {
		return "", err
	}
	out, readErr := io.ReadAll(io.LimitReader(stdout, int64(maxOut)+1))
	if len(out) > maxOut {
		out = out[:maxOut] // enough text: the rest is cut, as an HTML page's is
		_ = cmd.Process.Kill()
	}
	waitErr := cmd.Wait()
	switch {
	case ctx.Err() != nil:
		return "", fmt.Errorf("%s: over %s", name, lim.Timeout)
	case len(out) == maxOut:
		return string(out), nil
	case readErr != nil:
		return "", fmt.Errorf("%s: %w", name, readErr)
	case waitErr != nil:
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = waitErr.Error()
		}
		return "", fmt.Errorf("%s: %s", name, limitHit(msg, waitErr, lim))
	}
	return string(out), nil
}

// limitHit names the limit a failed child ran into, so a URL's reason says "over its memory
// limit" rather than a C++ exception's name; any other failure is the tool's first line.
func limitHit(stderr string, err error, lim PDFLimits) string {
	var exit *exec.ExitError
	signaled := errors.As(err, &exit) && exit.ProcessState != nil
	if signaled {
		if ws, ok := exit.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGXCPU {
			return fmt.Sprintf("over its CPU limit (%s)", lim.Timeout)
		}
	}
	low := strings.ToLower(stderr)
	if strings.Contains(low, "bad_alloc") || strings.Contains(low, "out of memory") || strings.Contains(low, "memory exhausted") {
		return fmt.Sprintf("over its memory limit (%d MiB)", lim.MemoryMB)
	}
	return firstLine(stderr)
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return capRunes(line, 300)
}

// limitedBuffer keeps the first max bytes written to it and drops the rest.
type limitedBuffer struct {
	max int
	buf *bytes.Buffer
}

func (b *limitedBuffer) Write(p []byte) (int, error) {
	if room := b.max - b.buf.Len(); room > 0 {
		b.buf.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}
