"""poly.debug (in development)."""
