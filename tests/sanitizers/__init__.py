"""Sanitizer builds of the native extension and the environment that runs tests against them."""
