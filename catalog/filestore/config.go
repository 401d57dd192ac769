package filestore

import "time"

// Download modes (files.download).
const (
	// DownloadProxy streams downloads through the gateway.
	DownloadProxy = "proxy"
	// DownloadRedirect answers an authorized download with a 302 to a
	// short-lived presigned URL of the bucket (s3 only; other backends
	// are proxied).
	DownloadRedirect = "redirect"
)

// Config selects and configures the backends of a Store.
type Config struct {
	// Backend is where new files go: BackendDir, BackendS3 or
	// BackendMongoDB ("" means BackendMongoDB).
	Backend string `json:"backend"`
	// Dir is the files directory ("" leaves the dir backend out).
	Dir string `json:"dir"`
	// S3 configures the bucket (an empty Bucket leaves the s3 backend out).
	S3 S3Config `json:"s3"`
	// Download is DownloadProxy or DownloadRedirect.
	Download string `json:"download"`
	// TouchEvery is how often a writer refreshes its pending file's
	// Touched time (0: DefaultTouchEvery); keep it well below the sweep's
	// grace.
	TouchEvery time.Duration `json:"touch_every"`
}

// S3Config is an S3-compatible bucket.
type S3Config struct {
	// Bucket holds the objects; it must exist.
	Bucket string `json:"bucket"`
	// Prefix starts every object key ("files/" gives "files/<id>").
	Prefix string `json:"prefix"`
	// Region is the bucket's region ("" : us-east-1, or AWS_REGION).
	Region string `json:"region"`
	// Endpoint is host[:port] or a URL of the server ("": AWS S3).
	Endpoint string `json:"endpoint"`
	// PathStyle addresses the bucket in the path, not the host name.
	PathStyle bool `json:"path_style"`
	// AccessKeyID and SecretAccessKey are static credentials; empty takes
	// them from the AWS environment (AWS_ACCESS_KEY_ID, ~/.aws/credentials,
	// instance roles).
	AccessKeyID     string `json:"access_key_id"`
	SecretAccessKey string `json:"secret_access_key"`
	// PartBytes is the size of one part of a multipart upload: the memory
	// one upload holds (0: 16 MiB).
	PartBytes int64 `json:"part_bytes"`
	// PresignTTL is how long a presigned download URL lives (0: 5 minutes).
	PresignTTL time.Duration `json:"presign_ttl"`
}
