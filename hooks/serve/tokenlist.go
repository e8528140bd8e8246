package serve

import (
	"fmt"
	"io"
)

// TokenList is `git+ member token list`'s view of tokens (docs/serving.md
// "Tokens"): --json prints {"tokens":[{"name","id","created"}]}, never a
// hash or key; WriteText one tab-separated line per token.
type TokenList struct {
	Tokens []TokenListed `json:"tokens"`
}

// TokenListed is one token as TokenList shows it.
type TokenListed struct {
	Name    string `json:"name"`
	ID      string `json:"id"`
	Created string `json:"created"`
}

// TokenListOf is the view of recs (ListTokens).
func TokenListOf(recs []TokenRecord) TokenList {
	v := TokenList{Tokens: []TokenListed{}}
	for _, r := range recs {
		v.Tokens = append(v.Tokens, TokenListed{Name: r.Name, ID: r.ID, Created: r.Created})
	}
	return v
}

// WriteText prints member, id and issue time of each token.
func (v TokenList) WriteText(w io.Writer) {
	for _, t := range v.Tokens {
		fmt.Fprintf(w, "%s\t%s\t%s\n", t.Name, t.ID, t.Created)
	}
}
