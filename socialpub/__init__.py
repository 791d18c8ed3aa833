"""socialpub: the application core (app factory, config, security, rate limits,
errors, CLI and domain services)."""

import warnings

# connexion imports starlette's test client at start-up, which warns about httpx on
# every process start; it is not used outside tests.
warnings.filterwarnings("ignore", message="Using `httpx` with `starlette.testclient`")
