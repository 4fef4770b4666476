//go:build !windows

package discover
