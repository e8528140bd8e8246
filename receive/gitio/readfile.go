package gitio

// ReadFile reads the small file at path (a ref, a fold-cache entry) with as
// few system calls as the platform allows (readfile_unix.go); initial is
// the first buffer size, and a file longer than limit is an error.
func ReadFile(path string, initial, limit int) ([]byte, error) {
	return readFile(path, initial, limit)
}
