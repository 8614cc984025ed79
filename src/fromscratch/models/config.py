"""The one rule by which every model takes its config (chapters 06 on).

``Model(config, **fields)``: keyword arguments are field names of the model's config dataclass and
replace those fields of ``config`` (of the default config, the blog's model, when no config is given).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, TypeVar

Config = TypeVar("Config")


def resolve_config(config_class: type[Config], config: Config | None, fields: dict[str, Any]) -> Config:
    """``config`` (or ``config_class()`` when None) with ``fields`` replaced.

    Raises TypeError when ``config`` is not a ``config_class`` or a field name is unknown.
    """
    model = config_class.__name__.removesuffix("Config")
    if config is not None and not isinstance(config, config_class):
        raise TypeError(
            f"{model} takes a {config_class.__name__} (e.g. from the run profile), "
            f"got {type(config).__name__}; or pass sizes as keywords: {model}(emb=..., heads=...)."
        )
    return replace(config if config is not None else config_class(), **fields)
