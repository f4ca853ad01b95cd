"""PortOptions (core/options.py): one typed value that the configuration makes, the engine completes, the workers
receive and the result cache keys on."""

from __future__ import annotations

import pickle
from pathlib import Path

import pytest

from ascend_port.core.options import PortOptions, extension_ops
from ascend_port.run import config


def test_options_pickle_to_the_workers_and_key_lru_caches() -> None:
    options = PortOptions(
        other_devices="drop",
        target="2.1.0.post17",
        target_explicit=True,
        transformers_pin="4.46.1",
        extension_ops=extension_ops({"pkg._C": {"scale": "csrc/scale.cpp"}}),
        family="cuda folder",
    )
    again = pickle.loads(pickle.dumps(options))
    assert again == options and hash(again) == hash(options)
    assert again.extension_op_map == {"pkg._C": {"scale": "csrc/scale.cpp"}}


def test_the_cache_key_leaves_out_only_the_family() -> None:
    assert PortOptions(family="cuda folder").cache_key() == PortOptions().cache_key()
    assert PortOptions(family="cuda folder") != PortOptions()  # (an lru cache keyed by options still tells them apart)
    keys = {
        PortOptions(**changed).cache_key()
        for changed in (
            {},
            {"other_devices": "drop"},
            {"npu_aware": True},
            {"target": "2.5.1"},
            {"target": "2.5.1", "target_explicit": True},
            {"attention_backend": "mindiesd"},
            {"transformers_pin": "4.46.1"},
            {"extension_ops": extension_ops({"pkg._C": {}})},
        )
    }
    assert len(keys) == 8


def test_extension_ops_are_sorted_whatever_the_order_found() -> None:
    first = extension_ops({"b._C": {"y": "y.cpp", "x": "x.cpp"}, "a._C": {}})
    second = extension_ops({"a._C": {}, "b._C": {"x": "x.cpp", "y": "y.cpp"}})
    assert first == second == (("a._C", ()), ("b._C", (("x", "x.cpp"), ("y", "y.cpp"))))


def test_an_unknown_other_devices_value_is_refused() -> None:
    with pytest.raises(ValueError, match="other_devices: 'fork' is not one of keep, drop"):
        PortOptions(other_devices="fork")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("flags", "expected"),
    [
        ({}, PortOptions()),
        ({"other-devices": "drop"}, PortOptions(other_devices="drop")),
        ({"torch-npu": "2.5.1"}, PortOptions(target="2.5.1.post1", target_explicit=True)),  # (the covered release)
        ({"attention-backend": "mindiesd"}, PortOptions(attention_backend="mindiesd")),
    ],
)
def test_settings_make_the_options(tmp_path: Path, flags: dict[str, str], expected: PortOptions) -> None:
    (tmp_path / ".git").mkdir()
    assert config.resolve([tmp_path], flags).run_config().options == expected
