"""Checks of models."""
