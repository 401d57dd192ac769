// Package deploy holds toxgate's deployment files, not Go code: the Helm
// chart (helm/toxgate), the compose file for one host (compose.yaml) and
// their README. Its tests check them with Helm's own lint and template
// commands and by reading what they render. The container image they run is
// built by gateway/cmd/toxgate-image (make image).
package deploy
