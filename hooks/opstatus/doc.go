// Package opstatus is what the server shows its operators (docs/operating.md
// "When a wake rule fails", "When a protected branch moves unjudged",
// "Where operators and users see it"): how each run of a wake rule ended
// (wakeoutcome.go), the unjudged-update alarm (unjudged.go), the record
// files both are kept in (records.go), and the server's published status
// ref that carries them to clones (opstatus.go). `git+ queue show`, the
// page and /metrics read them.
package opstatus
