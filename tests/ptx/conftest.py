"""pytest fixtures for the PTX front-end tests."""
from __future__ import annotations

import pytest

from ptx_fixtures import ARCHS


@pytest.fixture(params=ARCHS)
def arch(request) -> str:
    return request.param
