package contract

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestSettingsRoundTrip(t *testing.T) {
	in := Settings{
		Catalog: CatalogSettings{ConcurrentWrites: true, UploadGrace: time.Minute, SweepInterval: time.Second,
			Files: []byte(`{"backend":"dir","dir":"/x"}`), ActivityListLimit: 3, Auth: CatalogAuthSettings{PublicUserDetails: true}},
		DataStore: DataStoreSettings{Dir: "/d", SQLTimeout: 2 * time.Second, LoadFormats: []string{"CSV"}, EgressAllow: []string{"10.0.0.0/8"}, EgressMaxRedirects: 2},
	}
	raw, err := EncodeSettings(in)
	if err != nil {
		t.Fatal(err)
	}
	out, err := ReadSettings(func(k string) string {
		if k == EnvSettings {
			return raw
		}
		return ""
	})
	if err != nil || !reflect.DeepEqual(in, out) {
		t.Fatalf("round trip: %v\n in=%+v\nout=%+v", err, in, out)
	}
}

func TestDecodeSettingsRefuses(t *testing.T) {
	for _, raw := range []string{"", "null", "[]", `{"catalog":{"upload_grace":0,"sweep_interval":1}}`, "{" + strings.Repeat(" ", maxSettingsBytes) + "}"} {
		if _, err := DecodeSettings(raw); err == nil {
			t.Errorf("DecodeSettings(%.40q) accepted", raw)
		}
	}
}

// FuzzDecodeSettings decodes any message without panicking, and what it
// accepts encodes and decodes to the same settings.
func FuzzDecodeSettings(f *testing.F) {
	f.Add(`{"catalog":{"upload_grace":1,"sweep_interval":1}}`)
	f.Add(`{"catalog":{"upload_grace":1,"sweep_interval":1,"auth":{"public_user_details":true}},"datastore":{"load_formats":["CSV"],"egress_allow":[]}}`)
	f.Add(`{"catalog":[]}`)
	f.Fuzz(func(t *testing.T, raw string) {
		s, err := DecodeSettings(raw)
		if err != nil {
			return
		}
		enc, err := EncodeSettings(s)
		if err != nil {
			t.Fatal(err)
		}
		again, err := DecodeSettings(enc)
		if err != nil || !reflect.DeepEqual(s, again) {
			t.Fatalf("re-decode: %v %+v %+v", err, s, again)
		}
	})
}
