package tusup

import (
	"encoding/base64"
	"errors"
	"strings"
)

// MaxMetadataBytes bounds an Upload-Metadata header.
const MaxMetadataBytes = 4096

// ParseMetadata parses an Upload-Metadata header: comma-separated pairs of
// a key (no spaces or commas) and, after one space, the value in base64; a
// key alone has the empty value. Keys are unique.
func ParseMetadata(h string) (map[string]string, error) {
	if len(h) > MaxMetadataBytes {
		return nil, errors.New("Upload-Metadata is longer than 4096 bytes")
	}
	meta := map[string]string{}
	if strings.TrimSpace(h) == "" {
		return meta, nil
	}
	for _, pair := range strings.Split(h, ",") {
		pair = strings.TrimSpace(pair)
		k, v, _ := strings.Cut(pair, " ")
		if k == "" || strings.ContainsAny(k, " \t") {
			return nil, errors.New("Upload-Metadata has an empty or malformed key")
		}
		if _, dup := meta[k]; dup {
			return nil, errors.New("Upload-Metadata names " + k + " twice")
		}
		b, err := base64.StdEncoding.DecodeString(strings.TrimSpace(v))
		if err != nil {
			return nil, errors.New("Upload-Metadata value of " + k + " is not base64")
		}
		meta[k] = string(b)
	}
	return meta, nil
}
