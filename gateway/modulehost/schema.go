package modulehost

import (
	"bytes"
	"errors"
	"fmt"
	"math/big"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"toxgate/sdk/abi"
)

// noLoader refuses every external reference: module schemas are untrusted and
// must not make the host read files or fetch URLs.
type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("external schema references are not allowed (%s)", url)
}

// compileSchemas compiles the input schema of every route of m.
func compileSchemas(m abi.Manifest) ([]*jsonschema.Schema, error) {
	out := make([]*jsonschema.Schema, len(m.Routes))
	for i, r := range m.Routes {
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(r.InputSchema))
		if err != nil {
			return nil, fmt.Errorf("manifest.routes[%d].input_schema: %w", i, err)
		}
		c := jsonschema.NewCompiler()
		c.UseLoader(noLoader{})
		url := fmt.Sprintf("urn:toxgate:%s:route:%d", m.Name, i)
		if err := c.AddResource(url, doc); err != nil {
			return nil, fmt.Errorf("manifest.routes[%d].input_schema: %w", i, err)
		}
		if out[i], err = c.Compile(url); err != nil {
			return nil, fmt.Errorf("manifest.routes[%d].input_schema: %w", i, err)
		}
	}
	return out, nil
}

var printer = message.NewPrinter(language.English)

// inputError is a request body refused before the guest runs.
type inputError struct {
	field, message string
}

// validateInput decodes body and validates it against s; it returns the first
// problem with the field it concerns (dotted path).
func validateInput(s *jsonschema.Schema, body []byte) *inputError {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	if err != nil {
		return &inputError{message: "the body is not valid JSON: " + err.Error()}
	}
	err = s.Validate(doc)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return &inputError{message: err.Error()}
	}
	ve = mostSpecific(ve)
	field := strings.Join(ve.InstanceLocation, ".")
	join := func(name string) string {
		if field == "" {
			return name
		}
		return field + "." + name
	}
	switch k := ve.ErrorKind.(type) {
	case *kind.Required:
		if len(k.Missing) > 0 {
			return &inputError{field: join(k.Missing[0]), message: "is required"}
		}
	case *kind.MaxLength:
		return &inputError{field: field, message: "has " + itoa(k.Got) + " characters; this model accepts at most " + itoa(k.Want)}
	case *kind.MaxItems:
		return &inputError{field: field, message: "the list holds " + itoa(k.Got) + " " + itemsOf(field) + "; at most " + itoa(k.Want) + " " + itemsOf(field) + " per call"}
	case *kind.MinItems:
		return &inputError{field: field, message: "the list holds " + itoa(k.Got) + " " + itemsOf(field) + "; at least " + itoa(k.Want) + " per call"}
	case *kind.Minimum:
		return &inputError{field: field, message: "must be at least " + ratText(k.Want) + ", got " + ratText(k.Got)}
	case *kind.ExclusiveMinimum:
		return &inputError{field: field, message: "must be greater than " + ratText(k.Want) + ", got " + ratText(k.Got)}
	case *kind.Maximum:
		return &inputError{field: field, message: "must be at most " + ratText(k.Want) + ", got " + ratText(k.Got)}
	case *kind.ExclusiveMaximum:
		return &inputError{field: field, message: "must be less than " + ratText(k.Want) + ", got " + ratText(k.Got)}
	case *kind.AdditionalProperties:
		if len(k.Properties) > 0 {
			return &inputError{field: join(k.Properties[0]), message: "is not an accepted field"}
		}
	}
	return &inputError{field: field, message: ve.ErrorKind.LocalizedString(printer)}
}

// ratText writes a schema bound or value as a JSON user wrote it (1000000,
// 0.5, 1e+300).
func ratText(r *big.Rat) string {
	if r == nil {
		return "?"
	}
	f, _ := r.Float64()
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// itemsOf names the items of list field: "SMILES" for smiles, else "items".
func itemsOf(field string) string {
	if strings.EqualFold(field[strings.LastIndexByte(field, '.')+1:], "smiles") {
		return "SMILES"
	}
	return "items"
}

// mostSpecific descends to the leaf error that explains the failure. Among
// the causes of a oneOf/anyOf, a branch refused only for its type (a string
// branch, for a list) explains less than one that accepted the value and
// failed further in: deeper in the value (an item of the list), or on
// another keyword at the same place (a list too long).
func mostSpecific(ve *jsonschema.ValidationError) *jsonschema.ValidationError {
	for len(ve.Causes) > 0 {
		next, best := ve.Causes[0], -1
		for _, c := range ve.Causes {
			l := leaf(c)
			score := 2 * len(l.InstanceLocation)
			if _, typeOnly := l.ErrorKind.(*kind.Type); !typeOnly {
				score++
			}
			if score > best {
				next, best = c, score
			}
		}
		ve = next
	}
	return ve
}

func leaf(ve *jsonschema.ValidationError) *jsonschema.ValidationError {
	for len(ve.Causes) > 0 {
		ve = ve.Causes[0]
	}
	return ve
}
