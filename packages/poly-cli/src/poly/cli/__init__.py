"""poly.cli (in development)."""
