"""The workspace at a glance: what the home page and `cuset` show before any work starts."""

from __future__ import annotations

import json
from typing import Any

from cuset import jobs
from cuset.data import BUNDLED_CORPUS
from cuset.models import model_name, models_dir
from cuset.objective import list_named
from cuset.workspace import Store, workspace_dir


def overview() -> dict[str, Any]:
    """Model in force, bundled corpus and its split, scoring runs, saved objective configs and
    the latest fine-tuning jobs."""
    split_path = BUNDLED_CORPUS.parent / "split.json"
    split = json.loads(split_path.read_text()) if split_path.is_file() else {}
    store = Store()
    return {
        "workspace": str(workspace_dir()),
        "model": model_name(),
        "prepared_models": sorted(p.name for p in models_dir().iterdir() if p.is_dir() and not p.name.startswith(".")) if models_dir().is_dir() else [],
        "bundled_samples": split.get("n_samples", 0),
        "train_families": split.get("train_families", []),
        "held_out_families": split.get("held_out_families", []),
        "scoring_runs": store.rows("scoring_runs", limit=10),
        "objective_configs": list_named(),
        "jobs": [
            {"id": j.id, "method": j.method, "preset": j.preset, "status": j.status, "step": f"{j.step}/{j.total_steps}"}
            for j in jobs.list_jobs(limit=10)
        ],
    }
