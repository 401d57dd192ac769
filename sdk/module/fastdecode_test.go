package module

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

// oneOrMany takes a string or a list of strings, as model inputs often do.
type oneOrMany []string

func (o *oneOrMany) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		*o = oneOrMany{s}
		return nil
	}
	var l []string
	if err := json.Unmarshal(b, &l); err != nil {
		return errors.New("want a string or a list of strings")
	}
	*o = l
	return nil
}

// upper is a TextUnmarshaler.
type upper string

func (u *upper) UnmarshalText(b []byte) error {
	if len(b) > 10 {
		return errors.New("too long")
	}
	*u = upper(strings.ToUpper(string(b)))
	return nil
}

type node struct {
	Name string  `json:"name"`
	Next *node   `json:"next,omitempty"`
	Kids []*node `json:"kids"`
}

type inner struct {
	N int     `json:"n"`
	X float64 `json:"x"`
}

type everything struct {
	B     bool               `json:"b"`
	I     int                `json:"i"`
	I8    int8               `json:"i8"`
	I16   int16              `json:"i16"`
	I32   int32              `json:"i32"`
	U     uint               `json:"u"`
	U8    uint8              `json:"u8"`
	U64   uint64             `json:"u64"`
	F32   float32            `json:"f32"`
	F     float64            `json:"f"`
	S     string             `json:"s"`
	P     *float64           `json:"p"`
	PS    *inner             `json:"ps"`
	L     []string           `json:"l"`
	LF    []float64          `json:"lf"`
	LS    []inner            `json:"ls"`
	LL    [][]int            `json:"ll"`
	M     map[string]float64 `json:"m"`
	MS    map[string]inner   `json:"ms"`
	A     any                `json:"a"`
	Raw   json.RawMessage    `json:"raw"`
	One   oneOrMany          `json:"one"`
	Up    upper              `json:"up"`
	Tree  *node              `json:"tree"`
	In    inner              `json:"in"`
	NoTag string
	Skip  string `json:"-"`
	Omit  string `json:"omit,omitempty"`
	priv  int
}

var decodeSeeds = []string{
	`{}`,
	`null`,
	` {"b":true,"i":-12,"i8":127,"i16":-300,"i32":7,"u":3,"u8":255,"u64":18446744073709551615} `,
	`{"f32":1.5,"f":-2.5e-3,"s":"plain","p":4,"ps":{"n":1,"x":2}}`,
	`{"l":["a","b"],"lf":[1,2.5,-0],"ls":[{"n":1},{"x":3}],"ll":[[1,2],[],[3]]}`,
	`{"m":{"a":1,"b":2},"ms":{"k":{"n":5}},"a":{"x":[1,"two",true,null,{"y":{}}]}}`,
	`{"raw":{"any":[1,2]},"one":"CCO","up":"dox","tree":{"name":"r","next":{"name":"n"},"kids":[{"name":"k"}]}}`,
	`{"one":["CCO","c1ccccc1"],"in":{"n":2},"NoTag":"t","omit":"o"}`,
	`{"notag":"folded","S":"folded too","IN":{"N":1}}`,
	`{"s":"esc \" \\ \/ \b \f \n \r \t \u00e9 \ud83d\ude00 é"}`,
	`{"s":"caf\u00e9","l":[],"m":{},"lf":null,"p":null,"ps":null,"a":null}`,
	`{"s":null,"i":null,"b":null,"in":null,"f":null}`,
	`{"a":1e400}`,
	`{"f":1e400}`,
	`{"f32":1e39}`,
	`{"i":1.5}`,
	`{"i8":128}`,
	`{"u":-1}`,
	`{"i":01}`,
	`{"s":"\ud800"}`,
	"{\"s\":\"\xff\"}",
	`{"s":1}`,
	`{"unknown":1}`,
	`{"s":"a","s":"b"}`,
	`{"one":null}`,
	`{"one":5}`,
	`{"up":"much too long for it"}`,
	`{"up":5}`,
	`{"b":tru}`,
	`{"l":[1,]}`,
	`{"m":{"a":"x"}}`,
	`{"i":1} trailing`,
	`{"i":1}{"i":2}`,
	`[1,2]`,
	`"text"`,
	``,
	`{"ll":[[1,2],[3,"x"]]}`,
	`{"Skip":"x"}`,
	`{"num":12.5}`,
	`{"num":"12.5"}`,
	`{"num":"twelve"}`,
	`{"priv":1}`,
}

// FuzzFastDecodeMatchesStd checks the fast decoder's promise: whenever it
// succeeds, encoding/json (strict, as the SDK uses it) succeeds with the same
// value.
func FuzzFastDecodeMatchesStd(f *testing.F) {
	for _, s := range decodeSeeds {
		f.Add([]byte(s))
	}
	plan := planFor(reflect.TypeFor[everything]())
	if plan == nil {
		f.Fatal("no plan for the test type")
	}
	f.Fuzz(func(t *testing.T, input []byte) {
		var fast, std everything
		ok := fastDecode(plan, input, &fast)
		err := decode(input, &std)
		if ok && err != nil {
			t.Fatalf("fast decoder accepted %q; encoding/json: %v", input, err)
		}
		if ok && !reflect.DeepEqual(fast, std) {
			t.Fatalf("%q:\nfast %+v\nstd  %+v", input, fast, std)
		}
	})
}

// The fast path is taken for ordinary valid input, and every case it leaves
// to encoding/json is one of the documented ones.
func TestFastDecodeTakesValidInput(t *testing.T) {
	plan := planFor(reflect.TypeFor[everything]())
	for _, s := range decodeSeeds[:11] {
		var v everything
		if !fastDecode(plan, []byte(s), &v) {
			t.Errorf("fast decoder gave up on valid %s", s)
		}
	}
	for _, s := range decodeSeeds[11:] {
		var v everything
		ok := fastDecode(plan, []byte(s), &v)
		if s == `{"s":null,"i":null,"b":null,"in":null,"f":null}` && !ok {
			t.Errorf("nulls: gave up")
		}
	}
	type withNumber struct {
		N json.Number `json:"n"`
	}
	type embedded struct{ inner }
	type stringOpt struct {
		N int `json:"n,string"`
	}
	for _, typ := range []reflect.Type{reflect.TypeFor[embedded](), reflect.TypeFor[stringOpt](), reflect.TypeFor[[]byte](),
		reflect.TypeFor[map[int]string](), reflect.TypeFor[error](), reflect.TypeFor[withNumber]()} {
		if planFor(typ) != nil {
			t.Errorf("%v: planned; encoding/json should decide", typ)
		}
	}
}

// The handler sees the same input whichever decoder ran.
func TestHandleDecodesFastAndFallsBack(t *testing.T) {
	var got []everything
	ep := Handle("/t", func(in everything) (int, error) { got = append(got, in); return 0, nil })
	for _, s := range []string{`{"i":1,"l":["a"]}`, `{"i":1,"l":["a"]} `, `{"i":1,"i":1,"l":["a"]}`} {
		if _, err := ep.eval([]byte(s)); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	if len(got) != 3 || !reflect.DeepEqual(got[0], got[1]) || !reflect.DeepEqual(got[0], got[2]) || got[0].I != 1 || got[0].L[0] != "a" {
		t.Fatalf("decoded %+v", got)
	}
	if _, err := ep.eval([]byte(`{"i":"x"}`)); err == nil || !strings.Contains(err.Error(), "must be of type integer") {
		t.Fatalf("type error: %v", err)
	}
}
