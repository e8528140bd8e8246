package config

import (
	"fmt"
	"reflect"
	"strings"
)

// fieldsHelp says which fields the configuration type of v takes, level by
// level, for an "unknown field" error (docs/delivery.md "Configuration
// errors"): `"rules" at the top; in each of "rules": "name", "ref", "on",
// "run"`. A misspelt field is then fixed from the message alone.
func fieldsHelp(v any) string {
	var parts []string
	var walk func(t reflect.Type, where string)
	walk = func(t reflect.Type, where string) {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Array || t.Kind() == reflect.Map {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct {
			return
		}
		var names []string
		type sub struct {
			t    reflect.Type
			name string
		}
		var subs []sub
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if !f.IsExported() || name == "-" {
				continue
			}
			if name == "" {
				name = f.Name
			}
			names = append(names, fmt.Sprintf("%q", name))
			subs = append(subs, sub{f.Type, name})
		}
		parts = append(parts, where+": "+strings.Join(names, ", "))
		for _, s := range subs {
			walk(s.t, fmt.Sprintf("in each of %q", s.name))
		}
	}
	walk(reflect.TypeOf(v), "at the top")
	return "the fields are, " + strings.Join(parts, "; ")
}
