package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// maxNodes bounds the number of YAML nodes one Parse visits, counting every
// expansion of an alias, so that nested aliases ("billion laughs") cannot
// make it run for ever.
const maxNodes = 1 << 16

// extensionPrefix marks top-level keys that physd ignores, so that a file
// can hold anchors for aliases and merge keys, e.g.
// "x-rtsp: &rtsp {kind: rtsp, transport: udp}".
const extensionPrefix = "x-"

// Load is LoadWith with a zero Vocabulary: it skips the checks of the
// names other packages own (the estimator preset, the synthetic system
// and regime, the synthetic frame size). A caller that runs the
// configuration loads it with LoadWith.
func Load(path string) (*Config, error) {
	return LoadWith(path, Vocabulary{})
}

// LoadWith reads and parses the config file at path (see ParseWith),
// checking the names v lists. An empty path returns Default(). A file that
// does not exist is an error that wraps fs.ErrNotExist, so a caller with a
// default path can fall back to Default.
func LoadWith(path string, v Vocabulary) (*Config, error) {
	if path == "" {
		return Default(), nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	return ParseWith(data, path, v)
}

// Parse is ParseWith with a zero Vocabulary: it skips the checks of the
// names other packages own (the estimator preset, the synthetic system
// and regime, the synthetic frame size).
func Parse(data []byte, source string) (*Config, error) {
	return ParseWith(data, source, Vocabulary{})
}

// ParseWith parses a YAML config file; source names it in error messages.
// The names other packages own are checked against v (its empty fields
// skip those checks). An empty document (or one holding only comments or a
// null) yields Default(). Keys that are left out keep their defaults;
// camera entries start from DefaultCamera. Secrets are resolved from the
// environment and from files.
//
// Every problem found is reported: the error is an errors.Join of *Error
// values, sorted by position, and the Config is nil. ParseWith never
// panics.
func ParseWith(data []byte, source string, v Vocabulary) (cfg *Config, err error) {
	defer func() {
		if r := recover(); r != nil {
			cfg, err = nil, &Error{Source: source, Msg: fmt.Sprintf("internal error: %v", r)}
		}
	}()
	root, err := parseYAML(data, source)
	if err != nil {
		return nil, err
	}
	cfg = Default()
	if root == nil {
		return cfg, nil
	}
	d := &decoder{
		errs:      &errorList{source: source},
		pos:       map[string]pos{},
		budget:    maxNodes,
		expanding: map[*yaml.Node]bool{},
	}
	d.decode(root, reflect.ValueOf(cfg).Elem(), "")
	if !d.exhausted {
		validate(cfg, d.pos, d.errs, v)
	}
	if len(d.errs.errs) > 0 {
		return nil, joinSorted(d.errs.errs)
	}
	return cfg, nil
}

// parseYAML returns the single document's content node, nil for an empty
// document, or a syntax error.
func parseYAML(data []byte, source string) (*yaml.Node, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, nil
		}
		return nil, syntaxError(source, err)
	}
	var extra yaml.Node
	switch err := dec.Decode(&extra); {
	case err == nil:
		return nil, &Error{Source: source, Line: extra.Line, Col: extra.Column,
			Msg: "more than one YAML document; physd reads one"}
	case !errors.Is(err, io.EOF):
		return nil, syntaxError(source, err)
	}
	n := &doc
	if n.Kind == yaml.DocumentNode {
		if len(n.Content) == 0 {
			return nil, nil
		}
		n = n.Content[0]
	}
	if n.Kind == 0 || (n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null") {
		return nil, nil
	}
	return n, nil
}

// syntaxError turns a yaml.v3 parse error ("yaml: line 3: did not find
// expected key") into an *Error with the line.
func syntaxError(source string, err error) error {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	line := 0
	if rest, ok := strings.CutPrefix(msg, "line "); ok {
		if num, tail, ok := strings.Cut(rest, ": "); ok {
			if n, e := strconv.Atoi(num); e == nil && n > 0 {
				line, msg = n, tail
			}
		}
	}
	return &Error{Source: source, Line: line, Msg: "invalid YAML: " + msg, Err: err}
}

// joinSorted joins the errors sorted by position (errors without a position
// last), keeping the order of errors at the same position.
func joinSorted(errs []error) error {
	key := func(e error) (int, int) {
		var ce *Error
		if errors.As(e, &ce) && ce.Line > 0 {
			return ce.Line, ce.Col
		}
		return math.MaxInt, 0
	}
	slices.SortStableFunc(errs, func(a, b error) int {
		la, ca := key(a)
		lb, cb := key(b)
		if la != lb {
			return compareInt(la, lb)
		}
		return compareInt(ca, cb)
	})
	return errors.Join(errs...)
}

func compareInt(a, b int) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// decoder walks a yaml.Node tree against a Go value by reflection.
type decoder struct {
	errs *errorList
	// pos maps the dotted path of every value found in the file to the
	// position of its node, for the semantic checks that follow.
	pos map[string]pos
	// budget is the number of nodes still allowed to be visited.
	budget    int
	exhausted bool
	// expanding holds the anchors whose alias is being decoded, to catch
	// an alias inside its own anchor.
	expanding map[*yaml.Node]bool
}

func at(n *yaml.Node) pos { return pos{n.Line, n.Column} }

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func (d *decoder) errorf(n *yaml.Node, path string, err error, format string, args ...any) {
	if d.errs.bad == nil {
		d.errs.bad = map[string]bool{}
	}
	d.errs.bad[path] = true
	d.errs.add(at(n), path, err, format, args...)
}

// spend counts one node against the budget that bounds alias expansion;
// false means stop decoding.
func (d *decoder) spend(n *yaml.Node, path string) bool {
	if d.exhausted {
		return false
	}
	if d.budget--; d.budget < 0 {
		d.exhausted = true
		d.errorf(n, path, nil, "too many YAML nodes (more than %d, counting alias expansions)", maxNodes)
		return false
	}
	return true
}

// decode sets v from n. path is v's dotted path.
func (d *decoder) decode(n *yaml.Node, v reflect.Value, path string) {
	if !d.spend(n, path) {
		return
	}
	d.pos[path] = at(n)
	if n.Kind == yaml.AliasNode {
		target := n.Alias
		if target == nil {
			d.errorf(n, path, nil, "alias *%s refers to no anchor", n.Value)
			return
		}
		if d.expanding[target] {
			d.errorf(n, path, nil, "alias *%s refers to a node that contains it", n.Value)
			return
		}
		d.expanding[target] = true
		d.decode(target, v, path)
		delete(d.expanding, target)
		d.pos[path] = at(n) // report semantic errors at the alias, not the anchor
		return
	}
	if n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null" {
		// A null leaves a mapping at its defaults and zeroes anything else.
		switch {
		case v.Kind() == reflect.Struct && v.Type() != reflect.TypeFor[Secret]():
		case v.Kind() == reflect.Slice:
			v.Set(reflect.MakeSlice(v.Type(), 0, 0))
		default:
			v.SetZero()
		}
		return
	}
	t := v.Type()
	switch {
	case t == reflect.TypeFor[time.Duration]():
		d.duration(n, v, path)
		return
	case t == reflect.TypeFor[Bin]():
		// A number of frames, or "auto".
		if n.Kind == yaml.ScalarNode && n.ShortTag() == "!!str" && n.Value == BinAuto.String() {
			v.SetInt(int64(BinAuto))
			return
		}
		var i int64
		if !d.scalar(n, path, "auto or an integer ≥ 0") {
			return
		}
		if n.ShortTag() != "!!int" || n.Decode(&i) != nil || i < 0 || i >= 1<<31 {
			d.errorf(n, path, nil, "want auto or an integer ≥ 0, got %s", quote(n))
			return
		}
		v.SetInt(i)
		return
	case t == reflect.TypeFor[Secret]():
		if s, ok := d.text(n, path, "a string"); ok {
			sec, err := resolveSecret(s)
			if err != nil {
				d.errorf(n, path, err, "%v", err)
				return
			}
			v.Set(reflect.ValueOf(sec))
		}
		return
	}
	switch t.Kind() {
	case reflect.Struct:
		d.mapping(n, v, path)
	case reflect.Slice:
		d.sequence(n, v, path)
	case reflect.String:
		if s, ok := d.text(n, path, "a string"); ok {
			v.SetString(s)
		}
	case reflect.Bool:
		if !d.scalar(n, path, "true or false") {
			return
		}
		if n.ShortTag() != "!!bool" {
			d.errorf(n, path, nil, "want true or false, got %s", quote(n))
			return
		}
		var b bool
		if err := n.Decode(&b); err != nil {
			d.errorf(n, path, err, "want true or false, got %s", quote(n))
			return
		}
		v.SetBool(b)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if !d.scalar(n, path, "an integer") {
			return
		}
		var i int64
		if n.ShortTag() != "!!int" || n.Decode(&i) != nil {
			d.errorf(n, path, nil, "want an integer, got %s", quote(n))
			return
		}
		if v.OverflowInt(i) {
			d.errorf(n, path, nil, "%s is out of range", n.Value)
			return
		}
		v.SetInt(i)
	case reflect.Float32, reflect.Float64:
		if f, ok := d.number(n, path, "a number"); ok {
			v.SetFloat(f)
		}
	default:
		// Unreachable for the types of this package.
		d.errorf(n, path, nil, "internal error: cannot decode into %v", t)
	}
}

// scalar reports whether n is a scalar, recording an error naming want if
// it is not.
func (d *decoder) scalar(n *yaml.Node, path, want string) bool {
	if n.Kind == yaml.ScalarNode {
		return true
	}
	d.errorf(n, path, nil, "want %s, got %s", want, describe(n))
	return false
}

// text returns the text of a scalar with a standard tag. Numbers and
// booleans are accepted as their text ("device: 0").
func (d *decoder) text(n *yaml.Node, path, want string) (string, bool) {
	if !d.scalar(n, path, want) {
		return "", false
	}
	switch n.ShortTag() {
	case "!!str", "!!int", "!!float", "!!bool", "!!timestamp":
		return n.Value, true
	}
	d.errorf(n, path, nil, "want %s, got a value tagged %s", want, n.ShortTag())
	return "", false
}

// number returns a finite !!int or !!float scalar.
func (d *decoder) number(n *yaml.Node, path, want string) (float64, bool) {
	if !d.scalar(n, path, want) {
		return 0, false
	}
	tag := n.ShortTag()
	var f float64
	if (tag != "!!int" && tag != "!!float") || n.Decode(&f) != nil {
		d.errorf(n, path, nil, "want %s, got %s", want, quote(n))
		return 0, false
	}
	if math.IsNaN(f) || math.IsInf(f, 0) {
		d.errorf(n, path, nil, "want a finite number, got %s", n.Value)
		return 0, false
	}
	return f, true
}

// duration decodes a Go duration string or a number of seconds.
func (d *decoder) duration(n *yaml.Node, v reflect.Value, path string) {
	const want = `a duration such as "1.5s" or "500ms", or a number of seconds`
	if !d.scalar(n, path, want) {
		return
	}
	switch n.ShortTag() {
	case "!!int", "!!float":
		s, ok := d.number(n, path, want)
		if !ok {
			return
		}
		ns := math.Round(s * float64(time.Second))
		if !(math.Abs(ns) < math.MaxInt64) {
			d.errorf(n, path, nil, "%s seconds is out of range", n.Value)
			return
		}
		v.SetInt(int64(ns))
	case "!!str":
		dur, err := time.ParseDuration(n.Value)
		if err != nil {
			d.errorf(n, path, err, "want %s, got %s", want, quote(n))
			return
		}
		v.SetInt(int64(dur))
	default:
		d.errorf(n, path, nil, "want %s, got %s", want, quote(n))
	}
}

// sequence decodes a YAML sequence into a slice. Camera elements start
// from DefaultCamera, others from their zero value.
func (d *decoder) sequence(n *yaml.Node, v reflect.Value, path string) {
	if n.Kind != yaml.SequenceNode {
		d.errorf(n, path, nil, "want a list, got %s", describe(n))
		return
	}
	et := v.Type().Elem()
	s := reflect.MakeSlice(v.Type(), len(n.Content), len(n.Content))
	for i, c := range n.Content {
		e := s.Index(i)
		if et == reflect.TypeFor[Camera]() {
			e.Set(reflect.ValueOf(DefaultCamera()))
		}
		d.decode(c, e, fmt.Sprintf("%s[%d]", path, i))
	}
	v.Set(s)
}

// mapping decodes a YAML mapping into a struct, key by key, through the
// fields' yaml tags. Merge keys ("<<") are applied first, so the mapping's
// own keys override them.
func (d *decoder) mapping(n *yaml.Node, v reflect.Value, path string) {
	if n.Kind != yaml.MappingNode {
		d.errorf(n, path, nil, "want a mapping, got %s", describe(n))
		return
	}
	fields := fieldsOf(v.Type())
	seen := map[string]*yaml.Node{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		if k.Kind == yaml.ScalarNode && k.ShortTag() == "!!merge" {
			d.merge(val, v, path)
		}
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			d.errorf(k, path, nil, "want a string key, got %s", describe(k))
			continue
		}
		if k.ShortTag() == "!!merge" {
			continue
		}
		key := k.Value
		if first, dup := seen[key]; dup {
			d.errorf(k, join(path, key), nil, "duplicate key %q (first at line %d)", key, first.Line)
			continue
		}
		seen[key] = k
		idx, ok := fields[key]
		if !ok {
			if path == "" && strings.HasPrefix(key, extensionPrefix) {
				continue
			}
			msg := fmt.Sprintf("unknown key %q", key)
			if s := suggest(key, fields); s != "" {
				msg += fmt.Sprintf(" (did you mean %q?)", s)
			}
			d.errorf(k, join(path, key), nil, "%s", msg)
			continue
		}
		d.decode(val, v.Field(idx), join(path, key))
	}
}

// merge applies the value of a merge key: a mapping, an alias of one, or a
// list of them (earlier ones win, as in the YAML merge-key spec).
func (d *decoder) merge(n *yaml.Node, v reflect.Value, path string) {
	if !d.spend(n, path) {
		return
	}
	switch n.Kind {
	case yaml.MappingNode:
		d.mapping(n, v, path)
	case yaml.AliasNode:
		target := n.Alias
		if target == nil || d.expanding[target] {
			d.errorf(n, path, nil, "merge key: alias *%s refers to no anchor or to a node that contains it", n.Value)
			return
		}
		d.expanding[target] = true
		d.merge(target, v, path)
		delete(d.expanding, target)
	case yaml.SequenceNode:
		for i := len(n.Content) - 1; i >= 0; i-- {
			c := n.Content[i]
			if c.Kind == yaml.SequenceNode {
				d.errorf(c, path, nil, "merge key: want a mapping or an alias of one, got a list")
				continue
			}
			d.merge(c, v, path)
		}
	default:
		d.errorf(n, path, nil, "merge key: want a mapping or an alias of one, got %s", describe(n))
	}
}

// fieldsOf maps the yaml keys of a struct type to field indexes.
func fieldsOf(t reflect.Type) map[string]int {
	m := make(map[string]int, t.NumField())
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		if name := yamlKey(f); name != "" {
			m[name] = i
		}
	}
	return m
}

// yamlKey returns the key of a struct field from its yaml tag, or "" if
// it has none.
func yamlKey(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
	if name == "-" {
		return ""
	}
	return name
}

// suggest returns the known key closest to key if it is within edit
// distance 2, else "".
func suggest(key string, fields map[string]int) string {
	best, bestD := "", 3
	names := make([]string, 0, len(fields))
	for k := range fields {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, k := range names {
		if dist := editDistance(strings.ToLower(key), k, bestD); dist < bestD {
			best, bestD = k, dist
		}
	}
	return best
}

// editDistance is the Levenshtein distance between a and b, or any value
// ≥ limit once it is known to be at least limit.
func editDistance(a, b string, limit int) int {
	ra, rb := []rune(a), []rune(b)
	if d := len(ra) - len(rb); d >= limit || -d >= limit {
		return limit
	}
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			c := prev[j-1]
			if ra[i-1] != rb[j-1] {
				c++
			}
			cur[j] = min(c, prev[j]+1, cur[j-1]+1)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}

// describe names the kind of a node for "want X, got Y" messages.
func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.AliasNode:
		return "an alias"
	case yaml.DocumentNode:
		return "a document"
	case yaml.ScalarNode:
		return quote(n)
	}
	return "nothing"
}

// quote shows a scalar's text for an error message, shortened.
func quote(n *yaml.Node) string {
	if n.Kind != yaml.ScalarNode {
		return describe(n)
	}
	s := n.Value
	if r := []rune(s); len(r) > 40 {
		s = string(r[:40]) + "…"
	}
	return strconv.Quote(s)
}
