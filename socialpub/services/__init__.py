"""Domain services: plain functions with keyword-only arguments, shared by handlers,
workers and the CLI."""
