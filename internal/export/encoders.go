package export

import (
	"bufio"
	"cmp"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/parquet-go/parquet-go"
)

// encoder writes records of the chosen fields in one format.
type encoder interface {
	encode(r *Record, x extracted) error
	close() error
}

// newEncoder writes the chosen fields, then cols (extracted fields as columns of their own).
func newEncoder(format string, w io.Writer, fields []string, cols []column, csvSafe bool) (encoder, error) {
	idx := make([]int, len(fields))
	for i, f := range fields {
		idx[i] = fieldIndex[f]
	}
	switch format {
	case "jsonl":
		bw := bufio.NewWriterSize(w, 64<<10)
		return &jsonlEncoder{w: bw, fields: fields, idx: idx, cols: cols}, nil
	case "csv":
		c := csv.NewWriter(w)
		header := slices.Clone(fields)
		for _, col := range cols {
			header = append(header, col.name)
		}
		if err := c.Write(header); err != nil {
			return nil, err
		}
		return &csvEncoder{w: c, idx: idx, cols: cols, row: make([]string, len(header)), safe: csvSafe}, nil
	case "parquet":
		return newParquetEncoder(w, idx, cols), nil
	}
	return nil, fmt.Errorf("export: format %q", format)
}

var recordType = reflect.TypeOf(Record{})

// fieldIndex maps a field's name to its index in Record.
var fieldIndex = func() map[string]int {
	m := map[string]int{}
	for i := range recordType.NumField() {
		m[jsonName(recordType.Field(i))] = i
	}
	return m
}()

func fieldNames() []string {
	var out []string
	for i := range recordType.NumField() {
		out = append(out, jsonName(recordType.Field(i)))
	}
	return out
}

func jsonName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	return name
}

// jsonlEncoder writes one JSON object a line, its keys in field order.
type jsonlEncoder struct {
	w      *bufio.Writer
	fields []string
	idx    []int
	cols   []column
	buf    []byte
}

func (e *jsonlEncoder) encode(r *Record, x extracted) error {
	v := reflect.ValueOf(r).Elem()
	e.buf = append(e.buf[:0], '{')
	for i, f := range e.fields {
		if i > 0 {
			e.buf = append(e.buf, ',')
		}
		e.buf = strconv.AppendQuote(e.buf, f)
		e.buf = append(e.buf, ':')
		val := v.Field(e.idx[i]).Interface()
		if links, ok := val.([]string); ok && links == nil {
			val = []string{}
		}
		if f == "extract" { // nested as stored: the rules' fields by rule
			val = json.RawMessage(cmp.Or(r.Extract, "null"))
		}
		b, err := json.Marshal(val)
		if err != nil {
			return err
		}
		e.buf = append(e.buf, b...)
	}
	for i, c := range e.cols {
		if i > 0 || len(e.fields) > 0 {
			e.buf = append(e.buf, ',')
		}
		e.buf = strconv.AppendQuote(e.buf, c.name)
		e.buf = append(e.buf, ':')
		val := c.value(x)
		if c.json {
			val = json.RawMessage(cmp.Or(val.(string), "null"))
		}
		b, err := json.Marshal(val)
		if err != nil {
			return err
		}
		e.buf = append(e.buf, b...)
	}
	e.buf = append(e.buf, '}', '\n')
	_, err := e.w.Write(e.buf)
	return err
}

func (e *jsonlEncoder) close() error { return e.w.Flush() }

// csvEncoder writes a header and one row a record; links are separated by spaces (a URL holds
// none), times are RFC 3339.
type csvEncoder struct {
	w    *csv.Writer
	idx  []int
	cols []column
	row  []string
	safe bool // defuse formulas (Options.CSVSafe)
}

func (e *csvEncoder) encode(r *Record, x extracted) error {
	v := reflect.ValueOf(r).Elem()
	for i, fi := range e.idx {
		switch x := v.Field(fi).Interface().(type) {
		case string:
			e.row[i] = x
		case int32:
			e.row[i] = strconv.Itoa(int(x))
		case int64:
			e.row[i] = strconv.FormatInt(x, 10)
		case time.Time:
			e.row[i] = x.Format(time.RFC3339Nano)
		case []string:
			e.row[i] = strings.Join(x, " ")
		}
		if e.safe {
			e.row[i] = defuse(e.row[i])
		}
	}
	for j, c := range e.cols {
		i := len(e.idx) + j
		e.row[i] = c.text(x)
		if e.safe {
			e.row[i] = defuse(e.row[i])
		}
	}
	return e.w.Write(e.row)
}

// defuse prefixes a cell a spreadsheet would read as a formula with a single quote, which
// spreadsheets show as text (OWASP's advice for CSV injection).
func defuse(cell string) string {
	if cell != "" && strings.ContainsRune("=+-@\t\r", rune(cell[0])) {
		return "'" + cell
	}
	return cell
}

func (e *csvEncoder) close() error {
	e.w.Flush()
	return e.w.Error()
}

// parquetEncoder writes rows of a struct type made of the chosen fields, in row groups of at
// most parquetGroupRows rows or parquetGroupBytes of text, so memory stays bounded.
type parquetEncoder struct {
	w     *parquet.Writer
	typ   reflect.Type
	idx   []int
	cols  []column
	rows  int
	bytes int
}

const (
	parquetGroupRows  = 1000
	parquetGroupBytes = 32 << 20
)

func newParquetEncoder(w io.Writer, idx []int, cols []column) *parquetEncoder {
	sf := make([]reflect.StructField, len(idx), len(idx)+len(cols))
	for i, fi := range idx {
		sf[i] = recordType.Field(fi)
	}
	for i, c := range cols {
		sf = append(sf, c.structField(i))
	}
	typ := reflect.StructOf(sf)
	return &parquetEncoder{w: parquet.NewWriter(w, parquet.SchemaOf(reflect.New(typ).Interface()), parquet.Compression(&parquet.Zstd)),
		typ: typ, idx: idx, cols: cols}
}

func (e *parquetEncoder) encode(r *Record, x extracted) error {
	src := reflect.ValueOf(r).Elem()
	row := reflect.New(e.typ)
	for i, fi := range e.idx {
		row.Elem().Field(i).Set(src.Field(fi))
	}
	for j, c := range e.cols {
		row.Elem().Field(len(e.idx) + j).Set(reflect.ValueOf(c.value(x)))
	}
	if err := e.w.Write(row.Interface()); err != nil {
		return err
	}
	e.rows++
	e.bytes += len(r.Text) + len(r.URL)*(1+len(r.Links)) + len(r.Extract)
	if e.rows >= parquetGroupRows || e.bytes >= parquetGroupBytes {
		e.rows, e.bytes = 0, 0
		return e.w.Flush()
	}
	return nil
}

func (e *parquetEncoder) close() error { return e.w.Close() }
