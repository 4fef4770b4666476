"""Checks of output."""
