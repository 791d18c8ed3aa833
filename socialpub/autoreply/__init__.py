"""Auto-reply: rules that answer incoming comments and mentions, their test, and the
notifications polling that runs them."""
