"""Every test runs with a kernel cache of its own session (not the user's ~/.cache/shine)."""

import os
import tempfile

import pytest

_CACHE = tempfile.mkdtemp(prefix="shine-test-cache-")
os.environ["SHINE_CACHE_DIR"] = _CACHE


@pytest.fixture
def cache_dir():
    return _CACHE
