"""Checks of compat."""
