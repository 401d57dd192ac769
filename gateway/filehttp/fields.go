package filehttp

import (
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/url"

	"toxgate/catalog/ckan"
)

// MaxParts is the most parts a multipart upload body may have.
const MaxParts = 1000

// errBodyTooLarge is a body longer than the upload limit (a chunked body
// has no declared length to refuse it by before it is read).
var errBodyTooLarge = errors.New("request body larger than the upload limit")

// fieldReader reads the form fields of a multipart upload body, part by
// part, within FormSlack bytes of names and values and MaxParts parts.
type fieldReader struct {
	mr    *multipart.Reader
	form  url.Values
	bytes int
	parts int
	// fixed holds fields the query string gave; a part of the same name
	// must carry the same value and is not added again.
	fixed map[string]string
}

func newFieldReader(body io.Reader, boundary string, fixed map[string]string) *fieldReader {
	fr := &fieldReader{mr: multipart.NewReader(body, boundary), form: url.Values{}, fixed: fixed}
	for k, v := range fixed {
		fr.form.Set(k, v)
	}
	return fr
}

// next reads the fields up to the next file part and returns that part
// (nil at the end of the body). Its errors are *ckan.Error for a form the
// catalog refuses, errBodyTooLarge, or the body's read error.
func (fr *fieldReader) next() (*multipart.Part, error) {
	for {
		part, err := fr.mr.NextPart()
		if errors.Is(err, io.EOF) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		if fr.parts++; fr.parts > MaxParts {
			return nil, &ckan.Error{Status: 413, Type: ckan.TypeValidation, Message: fmt.Sprintf("The form has more than %d parts", MaxParts)}
		}
		if part.FileName() != "" {
			return part, nil
		}
		name := part.FormName()
		v, err := io.ReadAll(io.LimitReader(part, int64(FormSlack-fr.bytes+1)))
		fr.bytes += len(v) + len(name)
		if err != nil {
			return nil, err
		}
		if fr.bytes > FormSlack {
			return nil, &ckan.Error{Status: 413, Type: ckan.TypeValidation, Message: fmt.Sprintf("Form fields besides the file exceed %d bytes", FormSlack)}
		}
		if want, ok := fr.fixed[name]; ok {
			if string(v) != want {
				return nil, ckan.FieldError(name, "Differs from the "+name+" of the query string")
			}
			continue
		}
		fr.form.Add(name, string(v))
	}
}

// cappedReader fails with errBodyTooLarge once more than n bytes were read.
type cappedReader struct {
	r io.Reader
	n int64
}

func (c *cappedReader) Read(p []byte) (int, error) {
	if c.n < 0 {
		return 0, errBodyTooLarge
	}
	if int64(len(p)) > c.n+1 {
		p = p[:c.n+1]
	}
	n, err := c.r.Read(p)
	c.n -= int64(n)
	if c.n < 0 {
		return n, errBodyTooLarge
	}
	return n, err
}
