package hubrefs

import (
	"runtime"
	"sync"
)

// ParallelMap returns f(0) … f(n-1), computed in chunks on GOMAXPROCS
// goroutines, by index; nil when n is below threshold or there is one CPU
// (the caller then computes each as it goes). f must be pure: the folds use
// it to decode long logs ahead and then apply the results in order, so they
// report exactly the error a one-at-a-time fold would (docs/scale.md).
func ParallelMap[T any](n, threshold int, f func(i int) T) []T {
	workers := runtime.GOMAXPROCS(0)
	if n < threshold || workers < 2 {
		return nil
	}
	out := make([]T, n)
	var wg sync.WaitGroup
	chunk := (n + workers - 1) / workers
	for lo := 0; lo < n; lo += chunk {
		hi := min(lo+chunk, n)
		wg.Add(1)
		go func(lo, hi int) {
			defer wg.Done()
			for i := lo; i < hi; i++ {
				out[i] = f(i)
			}
		}(lo, hi)
	}
	wg.Wait()
	return out
}
