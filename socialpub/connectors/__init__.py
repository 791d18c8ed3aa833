"""Platform connectors (cross-cutting: publishing and accounts use them): one HTTP client per platform's public API, behind the
Connector interface in base.py. registry.py maps connector names to classes."""
