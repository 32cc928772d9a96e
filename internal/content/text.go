package content

import (
	"bytes"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/html/charset"
)

// MaxTextBytes caps the text kept from one body, as internal/parse caps HTML's.
const MaxTextBytes = 1 << 20

// PlainText is a text/plain body as stored text: decoded from its declared (or sniffed)
// charset to valid UTF-8 without NULs, white space runs kept as written, capped at
// MaxTextBytes on a rune boundary. Its title is its first non-blank line, shortened.
func PlainText(body []byte, contentType string) (title, text, charsetName string) {
	enc, name, _ := charset.DetermineEncoding(body, contentType)
	decoded := body
	if name != "utf-8" {
		if d, err := enc.NewDecoder().Bytes(body); err == nil {
			decoded = d
		}
	}
	decoded = bytes.ToValidUTF8(bytes.ReplaceAll(decoded, []byte{0}, nil), []byte("\uFFFD"))
	text = capRunes(strings.TrimSpace(string(decoded)), MaxTextBytes)
	for _, line := range strings.SplitN(text, "\n", 50) {
		if line = strings.TrimSpace(line); line != "" {
			title = capRunes(line, 200)
			break
		}
	}
	return title, text, name
}

// capRunes cuts s to at most n bytes without splitting a rune.
func capRunes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
