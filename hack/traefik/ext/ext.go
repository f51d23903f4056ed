// Package ext holds the extension points that Traefik's dynamic HTTP
// configuration embeds. A plain build extends nothing, so both are empty.
package ext

// HTTP is embedded in the dynamic HTTP configuration.
type HTTP struct{}

// Router is embedded in a dynamic HTTP router.
type Router struct{}
