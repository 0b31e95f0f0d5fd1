package config

import (
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

const exampleFile = "physd.example.yaml"

// TestExampleIsDefault loads the annotated example and checks that it
// holds exactly the defaults, so the file cannot drift from the code.
func TestExampleIsDefault(t *testing.T) {
	cfg, err := LoadWith(exampleFile, testVocab())
	if err != nil {
		t.Fatal(err)
	}
	want := Default()
	// The example's cameras: the default pendulum, every key spelled out.
	pendulum := DefaultCamera()
	pendulum.Name = "pendulum"
	want.Cameras = []Camera{pendulum}
	if !reflect.DeepEqual(cfg, want) {
		t.Errorf("the example differs from Default():\n got %+v\nwant %+v", cfg, want)
	}
	if !reflect.DeepEqual(cfg, Default()) {
		t.Errorf("running the example must equal running without a config file")
	}
}

// TestExampleListsEveryOption checks that every field of Config appears as
// a key in the example file, in its settings or in the commented cameras
// (a zone's keys can appear only there: the default camera has no zones).
func TestExampleListsEveryOption(t *testing.T) {
	root := exampleNode(t)
	inFile := map[string]bool{}
	collectKeys(root, "", inFile)
	var commented yaml.Node
	if err := yaml.Unmarshal([]byte(commentedCameras(t)), &commented); err != nil {
		t.Fatal(err)
	}
	collectKeys(commented.Content[0], "", inFile)
	var missing []string
	for _, p := range typeKeys(reflect.TypeFor[Config](), "") {
		if !inFile[p] {
			missing = append(missing, p)
		}
	}
	if len(missing) > 0 {
		t.Errorf("options missing from %s: %s", exampleFile, strings.Join(missing, ", "))
	}
}

// TestExampleCommentsEveryOption checks that every key written in block
// style has a comment above it or on its line (keys of a flow mapping
// such as "roi: {x: 0, ...}" share their parent's comment).
func TestExampleCommentsEveryOption(t *testing.T) {
	var bare []string
	var walk func(n *yaml.Node, path string)
	walk = func(n *yaml.Node, path string) {
		switch n.Kind {
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				k, v := n.Content[i], n.Content[i+1]
				p := join(path, k.Value)
				commented := k.HeadComment != "" || k.LineComment != "" || v.LineComment != "" ||
					(i == 0 && n.HeadComment != "") // "- name:" of a list element
				if n.Style&yaml.FlowStyle == 0 && !commented {
					bare = append(bare, p)
				}
				walk(v, p)
			}
		case yaml.SequenceNode:
			for _, c := range n.Content {
				walk(c, path+"[]")
			}
		}
	}
	walk(exampleNode(t), "")
	if len(bare) > 0 {
		t.Errorf("options without a comment in %s: %s", exampleFile, strings.Join(bare, ", "))
	}
}

// commentedCameras returns the example cameras at the end of the example
// file, uncommented, as a "cameras:" document.
func commentedCameras(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(exampleFile)
	if err != nil {
		t.Fatal(err)
	}
	const marker = "  # More cameras"
	_, tail, ok := strings.Cut(string(data), marker)
	if !ok {
		t.Fatalf("%s has no %q section", exampleFile, marker)
	}
	var b strings.Builder
	b.WriteString("cameras:\n")
	started := false
	for _, line := range strings.Split(tail, "\n")[1:] {
		started = started || strings.HasPrefix(line, "  # - ")
		switch {
		case !started:
		case strings.HasPrefix(line, "  # "):
			b.WriteString("  " + line[4:] + "\n")
		case strings.TrimSpace(line) == "#" || strings.TrimSpace(line) == "":
		default:
			t.Fatalf("unexpected line after %q: %q", marker, line)
		}
	}
	return b.String()
}

// TestExampleCommentedCameras uncomments the example cameras at the end of
// the file and checks that they load.
func TestExampleCommentedCameras(t *testing.T) {
	text := commentedCameras(t)
	t.Setenv("PHYSD_BRIDGE_URL", "rtsp://user:password@10.0.0.5:554/stream1")
	t.Setenv("PHYSD_PHONE_TOKEN", "correct horse battery staple")
	cfg, err := ParseWith([]byte(text), exampleFile+" (commented cameras)", testVocab())
	if err != nil {
		t.Fatalf("%v\n%s", err, text)
	}
	var kinds []SourceKind
	zoned := 0
	for _, c := range cfg.Cameras {
		kinds = append(kinds, c.Source.Kind)
		if len(c.Zones) > 0 {
			zoned++
		}
	}
	// Every kind but the synthetic default has an example (the zones
	// example is a second rtsp camera, next to the first).
	want := slices.DeleteFunc(SourceKinds(), func(k SourceKind) bool { return k == KindSynthetic })
	if kinds = slices.Compact(kinds); !reflect.DeepEqual(kinds, want) {
		t.Errorf("commented examples have kinds %v, want %v", kinds, want)
	}
	if zoned != 1 {
		t.Errorf("%d commented examples have zones, want 1", zoned)
	}
}

func exampleNode(t *testing.T) *yaml.Node {
	t.Helper()
	data, err := os.ReadFile(exampleFile)
	if err != nil {
		t.Fatal(err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	return doc.Content[0]
}

// collectKeys records the dotted key paths of a node tree, with "[]" for
// list elements.
func collectKeys(n *yaml.Node, path string, out map[string]bool) {
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			p := join(path, n.Content[i].Value)
			out[p] = true
			collectKeys(n.Content[i+1], p, out)
		}
	case yaml.SequenceNode:
		for _, c := range n.Content {
			collectKeys(c, path+"[]", out)
		}
	}
}

// typeKeys lists the dotted key paths of every field of a struct type,
// descending into structs and into slices of structs (as "[]").
func typeKeys(t reflect.Type, path string) []string {
	var keys []string
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		key := yamlKey(f)
		p := join(path, key)
		keys = append(keys, p)
		ft := f.Type
		switch {
		case ft == reflect.TypeFor[Secret]():
		case ft.Kind() == reflect.Struct:
			keys = append(keys, typeKeys(ft, p)...)
		case ft.Kind() == reflect.Slice && ft.Elem().Kind() == reflect.Struct:
			keys = append(keys, typeKeys(ft.Elem(), p+"[]")...)
		}
	}
	return keys
}

// TestEveryFieldHasAYAMLKey guards typeKeys and the decoder, which both
// rely on the yaml tags.
func TestEveryFieldHasAYAMLKey(t *testing.T) {
	var check func(t reflect.Type)
	seen := map[reflect.Type]bool{}
	check = func(typ reflect.Type) {
		if seen[typ] || typ == reflect.TypeFor[Secret]() {
			return
		}
		seen[typ] = true
		for i := range typ.NumField() {
			f := typ.Field(i)
			if yamlKey(f) == "" {
				t.Errorf("%v.%s has no yaml tag", typ, f.Name)
			}
			ft := f.Type
			if ft.Kind() == reflect.Slice {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				check(ft)
			}
		}
	}
	check(reflect.TypeFor[Config]())
}
