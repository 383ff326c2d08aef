"""Loaders and runners: ``BaseLoader`` and ``BaseRunner``, which every backend implements, and the
loaders every backend shares (bytes from and to files, objects from user scripts); Polygraphy's
``poly.backend.base`` and ``poly.backend.common`` re-export them. This package holds no code."""
