"""Link in bio."""
