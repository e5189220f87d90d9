// Package web holds the dashboard's page: one HTML file, its script and
// its style sheet, plain and embedded in the binary, so that the dashboard
// needs no build step and fetches nothing from the internet.
package web

import (
	"embed"
	"io/fs"
)

//go:embed static
var static embed.FS

// Files are the page's files, index.html at the top.
var Files, _ = fs.Sub(static, "static")
