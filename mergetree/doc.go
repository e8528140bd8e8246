// Package mergetree computes git's three-way merge of two commits' trees,
// deterministically and with git parity (DESIGN.md §7).
package mergetree
