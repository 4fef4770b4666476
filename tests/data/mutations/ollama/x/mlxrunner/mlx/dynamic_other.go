//go:build !darwin

package mlx

func macOSMajorVersion() int { return 0 }
