"""Fixtures: the recorded Alibaba Cloud (aliyun_recordings) served on loopback, and the
aliyun console pointed at it."""

from __future__ import annotations

import pytest
from aliyun_recordings import (
    KEY_ID,
    KEY_SECRET,
    PASSWORD,
    ROLE,
    USER,
    ActionTrailFake,
    Keys,
    LogonSite,
    StsFake,
    serving,
)


@pytest.fixture
def keys() -> Keys:
    return Keys({KEY_ID: KEY_SECRET})


@pytest.fixture(params=["international"])
def site(request, keys):
    """The logon pages and console of one site, served; ``site.url`` is where."""
    logon = LogonSite(keys, request.param)
    logon.add_user(USER, PASSWORD)
    with serving(logon.app) as url:
        logon.url = url
        yield logon


@pytest.fixture
def sts(keys):
    fake = StsFake(keys, {KEY_ID: {ROLE}})
    with serving(fake.app) as url:
        fake.url = url
        yield fake


@pytest.fixture
def trail(keys):
    fake = ActionTrailFake(keys)
    with serving(fake.app) as url:
        fake.url = url
        yield fake
