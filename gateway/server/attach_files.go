package server

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"go.mongodb.org/mongo-driver/v2/mongo"

	"toxgate/catalog/filestore"
	"toxgate/gateway/config"
	"toxgate/plugins/contract"
)

// filesConfig is the files section as the file store's configuration,
// with files.dir made absolute (empty: files/ beside mongodb.data_dir).
func filesConfig(c config.Config) filestore.Config {
	f := c.Files
	dir := f.Dir
	if dir == "" {
		dir = filepath.Join(filepath.Dir(filepath.Clean(c.MongoDB.DataDir)), "files")
	}
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	s3 := f.S3
	return filestore.Config{Backend: f.Backend, Dir: dir, Download: f.Download,
		TouchEvery: min(filestore.DefaultTouchEvery, c.Catalog.UploadGrace/4),
		S3: filestore.S3Config{Bucket: s3.Bucket, Prefix: s3.Prefix, Region: s3.Region, Endpoint: s3.Endpoint,
			PathStyle: s3.PathStyle, AccessKeyID: s3.AccessKeyID, SecretAccessKey: s3.SecretAccessKey,
			PartBytes: int64(s3.PartBytes), PresignTTL: s3.PresignTTL}}
}

// pluginSettings is the configuration the plugins receive
// (config.PluginSettings) with the file store's section, which only the
// gateway's assembly knows how to build.
func pluginSettings(c config.Config) contract.Settings {
	set := c.PluginSettings()
	set.Catalog.Files, _ = json.Marshal(filesConfig(c))
	return set
}

// awsEnv is the AWS_* variables of the gateway's environment, passed to the
// plugins (credentials and region of the s3 backend when the configuration
// leaves them empty).
func awsEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "AWS_") {
			env = append(env, kv)
		}
	}
	return env
}

// OpenFiles opens the file store that cfg's files section describes on db
// (the gateway's, and `toxgate files migrate`'s).
func OpenFiles(ctx context.Context, cfg config.Config, db *mongo.Database, log *slog.Logger) (*filestore.Store, error) {
	return filestore.New(ctx, db, filesConfig(cfg), log)
}

// attachFiles opens the file store, the one every part of this gateway
// uses (uploads and downloads, scoring jobs, the models' datasets).
func (a *App) attachFiles(ctx context.Context) error {
	st, err := OpenFiles(ctx, a.cfg, a.store.DB(), a.log.With("component", "filestore"))
	if err != nil {
		return err
	}
	a.fileStore = st
	return nil
}
