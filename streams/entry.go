package streams

// Entry is a stream entry: its ID and its field-value pairs, flat
// (field, value, field, value, ...). In replies that can name deleted entries
// (XREADGROUP history, XCLAIM), nil Fields means the entry is gone.
type Entry struct {
	ID     ID
	Fields [][]byte
}
