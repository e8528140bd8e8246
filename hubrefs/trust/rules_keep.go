package trust

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// CarryRequireKnownPusher returns the compact rules document doc with the
// current rules' requireKnownPusher added when doc does not mention the
// field at all, and whether it added it (docs/serving.md "Who must be
// known"). `git+ rules set` replaces the whole rules object; without this,
// writing branch protection into a repository made by `git+ init` would
// silently stop requiring a known pusher. A document that names the field
// (true, false or null) is taken as it is.
func CarryRequireKnownPusher(doc []byte, current Rules) ([]byte, bool, error) {
	if current.RequireKnownPusher == nil {
		return doc, false, nil
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(doc, &top); err != nil {
		return nil, false, fmt.Errorf("%w: %w", ErrInvalidRules, err)
	}
	if _, named := top["requireKnownPusher"]; named {
		return doc, false, nil
	}
	doc = bytes.TrimSpace(doc)
	field := fmt.Sprintf(`"requireKnownPusher":%t`, *current.RequireKnownPusher)
	rest := bytes.TrimSpace(doc[1:])
	out := []byte("{" + field)
	if len(rest) > 0 && rest[0] != '}' {
		out = append(out, ',')
	}
	return append(out, rest...), true, nil
}
