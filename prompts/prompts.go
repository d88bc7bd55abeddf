// Package prompts holds every text mnemo hands to a language model — the
// MCP server instructions for the host's model, and the prompts of the
// memory updater — as text/template files embedded in the binary, each with
// a typed render function. Golden outputs live in testdata.
package prompts

import (
	"embed"
	"fmt"
	"strings"
	"sync"
	"text/template"
)

//go:embed *.tmpl
var files embed.FS

// templates holds every *.tmpl file, named by its file name. A template
// that names a missing key fails to render instead of printing "<no value>".
var templates = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("").Option("missingkey=error").ParseFS(files, "*.tmpl"))
})

// render executes the template file name with data.
func render(name string, data any) (string, error) {
	var b strings.Builder
	if err := templates().ExecuteTemplate(&b, name, data); err != nil {
		return "", fmt.Errorf("render prompt %s: %w", name, err)
	}
	return b.String(), nil
}
