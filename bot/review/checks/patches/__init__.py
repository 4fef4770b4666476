"""Checks of patches."""
