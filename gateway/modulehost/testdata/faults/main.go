// Command faults is a test module: each route misbehaves in one way, so the host's
// limits can be proven. Not served by default.
package main

import (
	"strings"

	"toxgate/sdk/abi"
	"toxgate/sdk/module"
)

var (
	inCall bool   // set while a call runs: a second, concurrent call on the same instance sees it
	calls  int    // calls served by this instance
	spin   uint64 // written by loops so the compiler keeps them
	hoard  [][]byte
)

type echoIn struct {
	ID   int `json:"id" desc:"echoed back"`
	Work int `json:"work,omitempty" desc:"iterations of busy work" min:"0"`
}

type echoOut struct {
	ID       int    `json:"id"`
	Checksum uint64 `json:"checksum"`
	Calls    int    `json:"calls"`
}

func echo(in echoIn) (echoOut, error) {
	if inCall {
		return echoOut{}, module.Internal("instance shared by two calls")
	}
	inCall = true
	defer func() { inCall = false }()
	calls++
	sum := uint64(in.ID)
	for i := 0; i < in.Work; i++ {
		sum = sum*6364136223846793005 + 1442695040888963407
	}
	return echoOut{ID: in.ID, Checksum: sum, Calls: calls}, nil
}

type empty struct{}

func loop(empty) (empty, error) {
	for {
		spin++
	}
}

func membomb(empty) (empty, error) {
	for {
		b := make([]byte, 1<<20)
		b[0] = byte(len(hoard))
		hoard = append(hoard, b)
	}
}

func crash(empty) (empty, error) { panic("boom: the model crashed on purpose") }

type hugeIn struct {
	KiB int `json:"kib" min:"0"`
}

func huge(in hugeIn) (map[string]string, error) {
	return map[string]string{"blob": strings.Repeat("x", in.KiB<<10)}, nil
}

type logIn struct {
	Lines int `json:"lines" min:"0"`
}

func logLines(in logIn) (map[string]int, error) {
	for i := 0; i < in.Lines; i++ {
		module.Logger().Info("guest line", "i", i)
	}
	return map[string]int{"logged": in.Lines}, nil
}

type lookupIn struct {
	Compound string `json:"compound" minlen:"1" enum:"DOX|BPA"`
	Protein  string `json:"protein,omitempty"`
}

func lookup(in lookupIn) (map[string]string, error) {
	if in.Protein != "" && in.Protein != "P16403" {
		return nil, module.NotFound("protein", "no data for protein %q", in.Protein)
	}
	if in.Compound == "BPA" {
		return nil, module.InvalidInput("compound", "BPA is outside the applicability domain")
	}
	return map[string]string{"compound": in.Compound}, nil
}

type tableIn struct {
	N int `json:"n" min:"0" max:"100"`
}

type tableRow struct {
	T    float64 `json:"t"`
	C    float64 `json:"c"`
	Note string  `json:"note"`
}

func table(in tableIn) (map[string]any, error) {
	rows := make([]tableRow, in.N)
	for i := range rows {
		rows[i] = tableRow{T: float64(i), C: 100 / float64(i+1), Note: "row, \"quoted\""}
	}
	return map[string]any{"rows": rows, "unit": "mg/L"}, nil
}

func init() {
	module.Register(module.Info{
		Name: "faults", Version: "1.0.0", Description: "Test module whose routes misbehave on purpose.",
		Limits: abi.Limits{MemoryPages: 128, TimeoutMS: 1000, PoolSize: 4, MaxInputBytes: 4096},
		Card:   abi.ModelCard{Summary: "Not a model: exercises the host's limits."},
	},
		module.Handle("/faults/echo", echo).Output("id echoed, checksum of the busy work, calls served by this instance"),
		module.Handle("/faults/loop", loop).Output("never returns"),
		module.Handle("/faults/membomb", membomb).Output("never returns"),
		module.Handle("/faults/panic", crash).Output("never returns"),
		module.Handle("/faults/huge", huge).Output("a blob of kib KiB"),
		module.Handle("/faults/log", logLines).Output("number of lines logged"),
		module.Handle("/faults/lookup", lookup).Output("the compound").Example(`{"compound":"DOX"}`),
		module.Handle("/faults/table", table).Output("rows of t and c").Table("rows", "t", "c", "note"),
	)
}

func main() {}
