"""The YAML/JSON round trip every stage config shares (ObjectiveConfig, TrainConfig).

A stage's config is a dataclass whose fields carry help text and validate in __post_init__;
mixing in `ConfigFile` gives it `to_dict`, `from_dict` (unknown fields rejected with the list
of valid ones), `save` (YAML, or JSON by suffix) and `load`, all with errors that name the file.
"""

from __future__ import annotations

import json
from dataclasses import asdict, fields
from pathlib import Path
from typing import Any, ClassVar, TypeVar

T = TypeVar("T", bound="ConfigFile")


class ConfigFile:
    """Mixin for dataclass configs: dict and file round trips with clear errors."""

    KIND: ClassVar[str] = "config"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)  # type: ignore[call-overload]

    @classmethod
    def from_dict(cls: type[T], data: dict[str, Any], where: str = "") -> T:
        known = {f.name for f in fields(cls)}  # type: ignore[arg-type]
        where = where or cls.KIND
        unknown = set(data) - known
        if unknown:
            raise ValueError(f"{where}: unknown field(s) {sorted(unknown)}; valid: {', '.join(sorted(known))}.")
        try:
            return cls(**data)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{where}: {exc}") from None

    def save(self, path: str | Path) -> Path:
        """YAML, or JSON when the suffix is .json; returns the path."""
        import yaml

        path = Path(path)
        data = self.to_dict()
        text = json.dumps(data, indent=2) if path.suffix == ".json" else yaml.safe_dump(data, sort_keys=False)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        return path

    @classmethod
    def load(cls: type[T], path: str | Path) -> T:
        import yaml

        path = Path(path)
        try:
            data = yaml.safe_load(path.read_text()) or {}
        except (OSError, yaml.YAMLError) as exc:
            raise ValueError(f"{path}: cannot read {cls.KIND} ({exc}).") from None
        if not isinstance(data, dict):
            raise ValueError(f"{path}: a {cls.KIND} is a mapping of fields, got {type(data).__name__}.")
        return cls.from_dict(data, str(path))
