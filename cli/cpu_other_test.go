//go:build !unix

package cli

import "time"

// processCPU is not measured here.
func processCPU() time.Duration { return 0 }
