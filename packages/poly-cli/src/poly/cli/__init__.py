"""poly.cli: the `poly` command line (run, convert, inspect, surgeon, debug, validate)."""
