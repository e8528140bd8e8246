// Package config reads the after-push chain's configuration files
// (docs/operating.md, docs/delivery.md "Configuration errors"):
// hub/remotes.json, hub/webhooks.json and hub/wake.json under the git
// directory, each decoded strictly, an error naming the file, line and
// column (receive/jsonpos) and, for a misspelt field, the fields its shape
// takes (jsonfields.go). The shapes are their rooms': hooks/delivery's
// mirrors and webhooks, hooks/wake's rules.
package config
