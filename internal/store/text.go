package store

import (
	"errors"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
)

// Text makes a string that came from the web storable in a text column: Postgres refuses
// invalid UTF-8 and NUL bytes (SQLSTATE 22021), and one such header value, <html lang> or
// error text would otherwise fail the whole batch that carries it, again on every retry.
// Invalid sequences become U+FFFD and NULs are dropped. Byte-exact data (robots.txt bodies,
// HTTP heads) is stored as bytea instead.
func Text(s string) string {
	if strings.IndexByte(s, 0) >= 0 {
		s = strings.ReplaceAll(s, "\x00", "")
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}

// IsDataError reports an error Postgres raised about a value itself (SQLSTATE class 22: bad
// encoding, out of range, too long…): retrying the same write cannot help, so the item that
// carries it is set aside with the reason instead.
func IsDataError(err error) bool {
	var pg *pgconn.PgError
	return errors.As(err, &pg) && strings.HasPrefix(pg.Code, "22")
}

// texts is Text of each string.
func texts(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = Text(s)
	}
	return out
}
