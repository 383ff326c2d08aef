"""The `poly` subcommands, one module each; inspect, surgeon and debug are groups of them."""
