"""A benchmark suite added the way a team adds its own: one package, registered with ``suites.register``."""
