"""Logging and errors: the global logger ``G_LOGGER`` and the exception types poly raises (the
logger's ``critical()`` raises ``PolyException``). Import them from ``poly.core``; this package
holds no code."""
