"""Django's PostgreSQL backend, with every wait on the server bounded (``benchdash.dbwatchdog``)."""
