"""Reference implementations the tests check poly against."""
