package catalog

import (
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"
)

// decodeDataset decodes a dataset record's BSON as bson.Unmarshal does,
// without reflection: a start from the records file decodes every
// dataset, and the driver's reflection is most of that work. A document
// with a key or a value type this decoder does not know is decoded by
// bson.Unmarshal, so nothing a record holds is ever dropped here
// (TestDecodeDatasetMatchesTheDriver fills every field of the record's
// types and compares).
func decodeDataset(raw []byte) (*Dataset, error) {
	d := new(Dataset)
	if fastDataset(bsoncore.Document(raw), d) {
		return d, nil
	}
	d = new(Dataset)
	if err := bson.Unmarshal(raw, d); err != nil {
		return nil, err
	}
	return d, nil
}

// fastDataset fills d from doc; false when doc holds anything it does not
// decode as the driver would.
func fastDataset(doc bsoncore.Document, d *Dataset) bool {
	return elements(doc, func(key []byte, v bsoncore.Value) bool {
		ok := true
		switch string(key) {
		case "_id":
			d.ID, ok = bstr(v)
		case "name":
			d.Name, ok = bstr(v)
		case "title":
			d.Title, ok = bstr(v)
		case "author":
			d.Author, ok = strPtr(v)
		case "author_email":
			d.AuthorEmail, ok = strPtr(v)
		case "maintainer":
			d.Maintainer, ok = strPtr(v)
		case "maintainer_email":
			d.MaintainerEmail, ok = strPtr(v)
		case "notes":
			d.Notes, ok = strPtr(v)
		case "url":
			d.URL, ok = strPtr(v)
		case "version":
			d.Version, ok = strPtr(v)
		case "license_id":
			d.LicenseID, ok = strPtr(v)
		case "creator_user_id":
			d.CreatorUserID, ok = bstr(v)
		case "owner_org":
			d.OwnerOrg, ok = bstr(v)
		case "state":
			d.State, ok = bstr(v)
		case "private":
			d.Private, ok = bbool(v)
		case "type":
			d.Type, ok = bstr(v)
		case "metadata_created":
			d.MetadataCreated, ok = dateTime(v)
		case "metadata_modified":
			d.MetadataModified, ok = dateTime(v)
		case "tags":
			d.Tags, ok = strSlice(v)
		case "extras":
			d.Extras, ok = docSlice(v, func(doc bsoncore.Document, x *Extra) bool {
				return strFields(doc, func(k string) *string {
					switch k {
					case "key":
						return &x.Key
					case "value":
						return &x.Value
					}
					return nil
				})
			})
		case "resources":
			d.Resources, ok = docSlice(v, fastResource)
		case "collaborators":
			d.Collaborators, ok = docSlice(v, fastCollaborator)
		case "rev":
			d.Rev, ok = v.Int64OK()
		case "vocab_tags":
			d.VocabTags, ok = docSlice(v, func(doc bsoncore.Document, t *DatasetTag) bool {
				return strFields(doc, func(k string) *string {
					switch k {
					case "id":
						return &t.ID
					case "name":
						return &t.Name
					case "vocabulary_id":
						return &t.VocabularyID
					}
					return nil
				})
			})
		case "groups":
			d.Groups, ok = strSlice(v)
		default:
			return false
		}
		return ok
	})
}

// fastResource fills r from doc as fastDataset does a dataset.
func fastResource(doc bsoncore.Document, r *Resource) bool {
	return elements(doc, func(key []byte, v bsoncore.Value) bool {
		ok := true
		switch string(key) {
		case "id":
			r.ID, ok = bstr(v)
		case "url":
			r.URL, ok = bstr(v)
		case "name":
			r.Name, ok = strPtr(v)
		case "description":
			r.Description, ok = strPtr(v)
		case "format":
			r.Format, ok = bstr(v)
		case "hash":
			r.Hash, ok = bstr(v)
		case "mimetype":
			r.Mimetype, ok = strPtr(v)
		case "mimetype_inner":
			r.MimetypeInner, ok = strPtr(v)
		case "size":
			r.Size, ok = int64Ptr(v)
		case "created":
			r.Created, ok = bstr(v)
		case "last_modified":
			r.LastModified, ok = strPtr(v)
		case "metadata_modified":
			r.MetadataModified, ok = bstr(v)
		case "cache_url":
			r.CacheURL, ok = strPtr(v)
		case "cache_last_updated":
			r.CacheLastUpdated, ok = strPtr(v)
		case "resource_type":
			r.ResourceType, ok = strPtr(v)
		case "url_type":
			r.URLType, ok = strPtr(v)
		case "state":
			r.State, ok = bstr(v)
		case "extras":
			// free values of any type: the driver's own decoding
			if v.Type == bsoncore.TypeNull {
				r.Extras = nil
				break
			}
			sub, isDoc := v.DocumentOK()
			if !isDoc {
				return false
			}
			var m map[string]any
			ok = bson.Unmarshal(sub, &m) == nil
			r.Extras = m
		case "file_id":
			r.FileID, ok = bstr(v)
		default:
			return false
		}
		return ok
	})
}

// fastCollaborator fills c from doc.
func fastCollaborator(doc bsoncore.Document, c *Collaborator) bool {
	return elements(doc, func(key []byte, v bsoncore.Value) bool {
		ok := true
		switch string(key) {
		case "user_id":
			c.UserID, ok = bstr(v)
		case "capacity":
			c.Capacity, ok = bstr(v)
		case "modified":
			c.Modified, ok = dateTime(v)
		default:
			return false
		}
		return ok
	})
}

// strFields fills the string fields of a small document, each found by
// field from its key; false for a key field does not know (nil) or a
// value that is not a string.
func strFields(doc bsoncore.Document, field func(string) *string) bool {
	return elements(doc, func(key []byte, v bsoncore.Value) bool {
		p := field(string(key))
		if p == nil {
			return false
		}
		s, ok := bstr(v)
		*p = s
		return ok
	})
}

// elements calls f with each element of doc, in order, until f returns
// false; false when doc is not a whole document or f returned false.
func elements(doc bsoncore.Document, f func(key []byte, v bsoncore.Value) bool) bool {
	length, _, ok := bsoncore.ReadLength(doc)
	if !ok || length < 5 || int(length) > len(doc) || doc[length-1] != 0 {
		return false
	}
	rest := doc[4 : length-1]
	for len(rest) > 0 {
		elem, r, ok := bsoncore.ReadElement(rest)
		if !ok {
			return false
		}
		key, err := elem.KeyBytesErr()
		if err != nil {
			return false
		}
		v, err := elem.ValueErr()
		if err != nil || !f(key, v) {
			return false
		}
		rest = r
	}
	return true
}

// bstr is a string value whose bytes end with the NUL that BSON requires
// (bsoncore does not check it; the driver refuses a string without it).
// The driver decodes null into a string field as "", which a record never
// writes; that is left to the driver.
func bstr(v bsoncore.Value) (string, bool) {
	if v.Type != bsoncore.TypeString || len(v.Data) < 5 || v.Data[len(v.Data)-1] != 0 {
		return "", false
	}
	return v.StringValueOK()
}

// strPtr is a *string value: null is nil.
func strPtr(v bsoncore.Value) (*string, bool) {
	if v.Type == bsoncore.TypeNull {
		return nil, true
	}
	s, ok := bstr(v)
	if !ok {
		return nil, false
	}
	return &s, true
}

// bbool is a boolean value, whose byte is 0 or 1 (bsoncore does not
// check it; the driver refuses any other).
func bbool(v bsoncore.Value) (bool, bool) {
	if v.Type != bsoncore.TypeBoolean || len(v.Data) != 1 || v.Data[0] > 1 {
		return false, false
	}
	return v.Data[0] == 1, true
}

// int64Ptr is a *int64 value: null is nil.
func int64Ptr(v bsoncore.Value) (*int64, bool) {
	if v.Type == bsoncore.TypeNull {
		return nil, true
	}
	n, ok := v.Int64OK()
	if !ok {
		return nil, false
	}
	return &n, true
}

// dateTime is a BSON date as the driver decodes it into a time.Time: at
// millisecond precision, in UTC.
func dateTime(v bsoncore.Value) (time.Time, bool) {
	ms, ok := v.DateTimeOK()
	if !ok {
		return time.Time{}, false
	}
	return time.UnixMilli(ms).UTC(), true
}

// strSlice is a []string value: null is nil, an array a slice of its
// strings.
func strSlice(v bsoncore.Value) ([]string, bool) {
	if v.Type == bsoncore.TypeNull {
		return nil, true
	}
	arr, ok := v.ArrayOK()
	if !ok {
		return nil, false
	}
	out := []string{}
	ok = elements(bsoncore.Document(arr), func(_ []byte, x bsoncore.Value) bool {
		s, ok := bstr(x)
		out = append(out, s)
		return ok
	})
	return out, ok
}

// docSlice is a slice of structs from an array of documents, each filled
// by fill: null is nil.
func docSlice[T any](v bsoncore.Value, fill func(bsoncore.Document, *T) bool) ([]T, bool) {
	if v.Type == bsoncore.TypeNull {
		return nil, true
	}
	arr, ok := v.ArrayOK()
	if !ok {
		return nil, false
	}
	out := []T{}
	ok = elements(bsoncore.Document(arr), func(_ []byte, x bsoncore.Value) bool {
		doc, ok := x.DocumentOK()
		if !ok {
			return false
		}
		var t T
		ok = fill(doc, &t)
		out = append(out, t)
		return ok
	})
	return out, ok
}
