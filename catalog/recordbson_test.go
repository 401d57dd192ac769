package catalog

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"
)

// fillAll sets every field of the value v points to, recursively, to a
// value that is not its zero: strings name their path, slices hold two
// elements, maps free values of each kind a request may give.
func fillAll(t *testing.T, v reflect.Value, path string) {
	t.Helper()
	switch v.Kind() {
	case reflect.Struct:
		if v.Type() == reflect.TypeOf(time.Time{}) {
			v.Set(reflect.ValueOf(time.UnixMilli(1_700_000_000_123).UTC()))
			return
		}
		for i := range v.NumField() {
			fillAll(t, v.Field(i), path+"."+v.Type().Field(i).Name)
		}
	case reflect.String:
		v.SetString("v" + path)
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int64, reflect.Int:
		v.SetInt(7)
	case reflect.Pointer:
		p := reflect.New(v.Type().Elem())
		fillAll(t, p.Elem(), path)
		v.Set(p)
	case reflect.Slice:
		s := reflect.MakeSlice(v.Type(), 2, 2)
		for i := range 2 {
			fillAll(t, s.Index(i), fmt.Sprintf("%s[%d]", path, i))
		}
		v.Set(s)
	case reflect.Map:
		if v.Type() != reflect.TypeOf(map[string]any{}) {
			t.Fatalf("%s: a map of %s; extend fillAll", path, v.Type())
		}
		v.Set(reflect.ValueOf(map[string]any{"s": "x", "n": int64(3), "f": 1.5, "b": true, "null": nil,
			"arr": []any{"x", int64(1)}, "doc": map[string]any{"k": "v"}}))
	default:
		t.Fatalf("%s: a field of kind %s; extend fillAll and decodeDataset", path, v.Kind())
	}
}

// sameAsDriver fails unless raw decodes by the fast path (when fast) and
// as bson.Unmarshal decodes it.
func sameAsDriver(t *testing.T, name string, raw []byte, fast bool) {
	t.Helper()
	var want Dataset
	if err := bson.Unmarshal(raw, &want); err != nil {
		t.Fatalf("%s: the driver: %v", name, err)
	}
	var quick Dataset
	if got := fastDataset(bsoncore.Document(raw), &quick); got != fast {
		t.Fatalf("%s: fast path %v, want %v", name, got, fast)
	}
	got, err := decodeDataset(raw)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if !reflect.DeepEqual(*got, want) {
		t.Fatalf("%s: decoded\n %#v\nthe driver\n %#v", name, *got, want)
	}
}

// TestDecodeDatasetMatchesTheDriver checks that the records file's
// decoder gives what bson.Unmarshal gives for a dataset with every field
// of every type set (so a field added to the record types without the
// decoder fails here), with every pointer and slice nil, with empty
// slices, for generated datasets, and, through the driver, for a document
// with a key it does not know.
func TestDecodeDatasetMatchesTheDriver(t *testing.T) {
	var full Dataset
	fillAll(t, reflect.ValueOf(&full).Elem(), "")
	raw, err := bson.Marshal(&full)
	if err != nil {
		t.Fatal(err)
	}
	sameAsDriver(t, "every field set", raw, true)

	bare := Dataset{ID: "x", Name: "bare"}
	raw, _ = bson.Marshal(&bare)
	sameAsDriver(t, "nil pointers and slices", raw, true)

	empty := Dataset{ID: "y", Tags: []string{}, Extras: []Extra{}, Resources: []Resource{{ID: "r", Extras: map[string]any{}}}, Groups: []string{}}
	raw, _ = bson.Marshal(&empty)
	sameAsDriver(t, "empty slices", raw, true)

	for _, d := range genModel(t, 200).datasets {
		raw, _ := bson.Marshal(d)
		sameAsDriver(t, d.Name, raw, true)
	}

	other, _ := bson.Marshal(bson.D{{Key: "_id", Value: "z"}, {Key: "name", Value: "other"}, {Key: "from_elsewhere", Value: 1}})
	sameAsDriver(t, "unknown key", other, false)
	size32, _ := bson.Marshal(bson.D{{Key: "_id", Value: "z"}, {Key: "resources", Value: bson.A{bson.D{{Key: "id", Value: "r"}, {Key: "size", Value: int32(5)}}}}})
	sameAsDriver(t, "a size stored as int32", size32, false)
}

// FuzzDecodeDataset checks that the records file's decoder never panics
// and, whenever it decodes a document by its fast path, gives what the
// driver gives.
func FuzzDecodeDataset(f *testing.F) {
	for _, d := range genModel(f, 3).datasets {
		raw, _ := bson.Marshal(d)
		f.Add(raw)
	}
	f.Add([]byte{5, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, raw []byte) {
		var quick Dataset
		if !fastDataset(bsoncore.Document(raw), &quick) {
			_, _ = decodeDataset(raw)
			return
		}
		var want Dataset
		if err := bson.Unmarshal(raw, &want); err != nil {
			t.Fatalf("fast path decoded what the driver refuses (%v)", err)
		}
		if !reflect.DeepEqual(quick, want) {
			t.Fatalf("decoded\n %#v\nthe driver\n %#v", quick, want)
		}
	})
}
