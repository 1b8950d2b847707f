"""Helpers shared by test modules (``from tests.helpers.caches import ListCache``).

Test modules import from here, never from each other: a test file is collected, and run,
wherever it is imported.
"""
