"""Checks of build."""
