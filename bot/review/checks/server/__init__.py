"""Checks of server."""
