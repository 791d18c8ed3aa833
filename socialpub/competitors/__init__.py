"""Competitor tracking."""
