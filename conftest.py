"""Shared by tests/ and python/tests: the `slow` marker.

A test marked slow is a larger or repeated variant of what the suite also
checks at a smaller size. CI skips it; scripts/bench runs the slow ones
(CUVIL_SLOW_TESTS=1), as does anyone who sets the variable.
"""

import os

import pytest

SLOW = os.environ.get("CUVIL_SLOW_TESTS") == "1"


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "slow: a larger variant of a tested case; runs with "
        "CUVIL_SLOW_TESTS=1 (scripts/bench)")


def pytest_collection_modifyitems(config, items):
    if SLOW:
        return
    skip = pytest.mark.skip(reason="slow: CUVIL_SLOW_TESTS=1 or scripts/bench")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)
