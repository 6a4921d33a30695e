from session_harness import session  # noqa: F401  (the fixture)
