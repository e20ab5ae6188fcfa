"""The adapters' tests run against a real `retold serve` started by
crates/http/tests/it/adapters.rs, which passes it in the environment:

- RETOLD_URL: the server; RETOLD_KEY: a host key whose agent `assistant` may write `user:jo`;
- RETOLD_ADMIN_KEY: the admin key, to read back sessions, turns and decisions;
- RETOLD_REGENERATED: what the server's (fake) provider answers when the orchestrator
  regenerates a draft with its fit bundle.
"""

import os
import sys
from pathlib import Path

import httpx
import pytest

HERE = Path(__file__).resolve().parent
# RETOLD_ADAPTERS_INSTALLED names where the harness pip-installed the two distributions (so
# the tests run what a user installs); without it the tests run the source tree.
INSTALLED = os.environ.get("RETOLD_ADAPTERS_INSTALLED")
if INSTALLED is None:
    sys.path[:0] = [str(HERE.parent), str(HERE.parent.parent / "clients" / "python")]
sys.path.insert(0, str(HERE))

import retold.adapters  # noqa: E402
import retold_schemas  # noqa: E402
from retold.adapters.base import Retold  # noqa: E402

if INSTALLED is not None:
    for module in (retold.adapters, retold_schemas):
        assert Path(module.__file__).resolve().is_relative_to(Path(INSTALLED).resolve()), module.__file__


def _env(name: str) -> str:
    value = os.environ.get(name)
    if not value:
        raise RuntimeError(f"{name} is not set: run these tests through `cargo xtask ci` "
                           "(crates/http/tests/it/adapters.rs starts the server)")
    return value


@pytest.fixture
def url() -> str:
    return _env("RETOLD_URL")


@pytest.fixture
def key() -> str:
    return _env("RETOLD_KEY")


@pytest.fixture
def regenerated() -> str:
    return _env("RETOLD_REGENERATED")


@pytest.fixture
def retold(url: str, key: str) -> Retold:
    client = Retold(url, key, timeout=30.0)
    yield client
    client.close()


class Admin:
    """What the service stored, read back with the admin key."""

    def __init__(self, url: str, key: str) -> None:
        self.http = httpx.Client(base_url=url, headers={"Authorization": f"Bearer {key}"}, timeout=30.0)

    def get(self, path: str) -> dict:
        response = self.http.get(path)
        assert response.status_code == 200, response.text
        return response.json()

    def turns(self, session_id: str) -> list[tuple[str, str]]:
        return [(t["role"], t["content"]) for t in self.get(f"/v1/admin/sessions/{session_id}/turns")["turns"]]

    def decisions(self, session_id: str) -> list[dict]:
        return self.get(f"/v1/admin/sessions/{session_id}/decisions")["decisions"]


@pytest.fixture
def admin(url: str) -> Admin:
    helper = Admin(url, _env("RETOLD_ADMIN_KEY"))
    yield helper
    helper.http.close()


# The orchestrator's worked example: a stored preference, a turn, a draft that hedges.
PREFERENCE = "Jo's preferred editor is Helix: configure Helix for Jo."
TURN = "Which editor should you configure for me?"
HEDGED = "I'm not sure which editor you use, so I'll configure [your editor]."
