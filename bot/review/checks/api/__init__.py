"""Checks of api."""
