package webview

// PausedLine says who paused the queue, when and why ("" while it runs;
// docs/queue.md, "Pausing a queue"); the page shows it above the entries.
func (q *Queue) PausedLine() string {
	if q.state == nil {
		return ""
	}
	return q.state.Paused.Line()
}
