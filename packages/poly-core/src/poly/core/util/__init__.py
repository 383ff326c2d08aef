"""Small general helpers under Polygraphy's ``util`` and ``mod`` names: attributes, sequences and
dictionaries, text and reprs, scalar checks, version tuples, ``export``/``deprecate`` decorators
and type-checked containers. Polygraphy's ``poly.util``, ``poly.mod`` and ``poly.common.interface``
re-export them. This package holds no code."""
