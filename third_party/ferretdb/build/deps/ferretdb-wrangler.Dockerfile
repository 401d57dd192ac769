FROM ghcr.io/ferretdb/ferretdb-wrangler:3.62.0-1
