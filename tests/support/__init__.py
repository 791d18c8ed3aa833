"""Helpers shared by the tests of more than one folder, one module each, named for what
it provides (factories, databases, platform_servers, ...). The modules that also hold
fixtures are pytest plugins, registered in tests/conftest.py."""
