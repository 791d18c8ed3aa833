"""socialpub: the application core (app factory, config, security, rate limits,
errors, CLI and domain services)."""
