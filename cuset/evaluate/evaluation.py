"""An evaluation run: suite tasks -> candidates (generated, or the suite's own) -> checked -> stored.

    config = EvalConfig(model="job:3", backend="cpu", levels=[1])
    run_id = run_evaluation(config, progress=lambda phase, done, total: ...)
    ResultStore().frame([run_id])                 # one row per candidate

`solutions` says where candidates come from: `generate` (the model writes them; see
cuset.generate), `reference` (the suite's reference solutions: every one must be correct) or
`wrong` (the suite's planted wrong solutions: none may be). As a background job:
`cuset eval ... --detach`, or `submit_evaluation(config)`; a fine-tune with `evaluate: true`
submits one for its final checkpoint when it completes (cuset.train.run).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field, fields, replace
from typing import Any, ClassVar

from cuset.config import ConfigFile
from cuset.evaluate.check import BACKENDS
from cuset.evaluate.harness import Candidate, evaluate_candidates
from cuset.evaluate.metrics import pass_at_k_table, speedups, summarise
from cuset.evaluate.results import ResultStore
from cuset.evaluate.sanitizer import DEFAULT_TOOLS

SOLUTIONS = ("generate", "reference", "wrong")
Progress = Callable[[str, int, int], None]


@dataclass
class EvalConfig(ConfigFile):
    """What to evaluate, on which tasks, how."""

    KIND: ClassVar[str] = "evaluation config"
    JOB_KIND: ClassVar[str] = "eval"

    model: str = field(default="default", metadata={"help": "Model that writes the candidates: a name or folder, or job:ID[@checkpoint-N] for a fine-tune."})
    solutions: str = field(default="generate", metadata={"help": f"Where candidates come from, one of {SOLUTIONS}."})
    suite: str = field(default="bundled", metadata={"help": "'bundled', 'corpus' (the training corpus's own solutions), a KernelBench checkout folder, or hf:NAME."})
    levels: list[int] = field(default_factory=list, metadata={"help": "Levels to keep (1, 2, 3); empty = all."})
    families: list[str] = field(default_factory=list, metadata={"help": "Op families to keep; empty = all."})
    split: str = field(default="", metadata={"help": "'in_distribution' or 'held_out' to keep one part; '' = both."})
    limit: int = field(default=0, metadata={"help": "Keep the first N tasks (0 = all): for quick looks."})
    backend: str = field(default="cpu", metadata={"help": f"Where candidates run, one of {BACKENDS}."})
    n_samples: int = field(default=1, metadata={"help": "Candidates per task (pass@k needs n >= k)."})
    temperature: float = field(default=0.0, metadata={"help": "0 = greedy; > 0 samples (needed for n_samples > 1)."})
    top_p: float = field(default=0.95, metadata={"help": "Nucleus sampling mass."})
    seed: int = field(default=42, metadata={"help": "Seed of generation (per task and sample) and of the checks' inputs."})
    max_new_tokens: int = field(default=1536, metadata={"help": "Reply length cap, tokens."})
    batch_size: int = field(default=48, metadata={"help": "Replies generated together (GenerateConfig.batch_size)."})
    dtype: str = field(default="auto", metadata={"help": "Generation dtype: auto (the model's own), float32, bfloat16 (int8 under engine ctranslate2)."})
    engine: str = field(default="auto", metadata={"help": "Generation engine: auto (transformers, or vLLM on a GPU), transformers (the reference), ctranslate2 (CPU int8/float32), openvino (CPU bfloat16/float32, OpenVINO GenAI), vllm."})
    one_shot: bool = field(default=True, metadata={"help": "Show one example task and solution in the prompt."})
    protocol: str = field(default="full", metadata={"help": (
        "What the model writes: full (the whole solution module) or kernel-only (the task's Python wrapper, cut from its "
        "reference solution, is given; the model writes the CUDA source). Results of the two are not comparable.")})
    trials: int = field(default=5, metadata={"help": "Correctness trials per candidate, each on fresh inputs from its own distribution."})
    tolerance: str = field(default="v0", metadata={"help": "Tolerance profile: 'v0' (atol = rtol = 1e-2, KernelBench v0.1) or 'strict' (fp32 1e-4, fp16/bf16 1e-2)."})
    static_policy: str = field(default="strict", metadata={"help": "Static checks: 'strict' (torch compute in forward fails) or 'lenient' (it is only flagged)."})
    sanitizer: bool = field(default=True, metadata={"help": "cuda backend: run each candidate the trials pass under compute-sanitizer (a finding is race, memory_error or sync_error; a sanitizer past its time limit, timeout). No effect on cpu/compile."})
    sanitizer_tools: list[str] = field(default_factory=lambda: list(DEFAULT_TOOLS), metadata={"help": "compute-sanitizer tools, in order, from racecheck, memcheck, synccheck, initcheck (initcheck is off by default: torch.empty buffers are read legitimately)."})
    timeout_s: float = field(default=120.0, metadata={"help": "Wall-clock limit of one candidate's check, seconds."})
    workers: int = field(default=0, metadata={"help": "Candidates checked at once (0 = one per core)."})
    label: str = field(default="", metadata={"help": "Name of the run on the Results page (default: model and method)."})
    method: str = field(default="", metadata={"help": "Training method of the model (filled in from the job for job:ID)."})
    train_job: int | None = field(default=None, metadata={"help": "The fine-tune job evaluated (filled in from job:ID)."})

    def __post_init__(self) -> None:
        if self.solutions not in SOLUTIONS:
            raise ValueError(f"solutions {self.solutions!r}: choose one of {', '.join(SOLUTIONS)}")
        if self.backend not in BACKENDS:
            raise ValueError(f"backend {self.backend!r}: choose one of {', '.join(BACKENDS)}")
        if self.n_samples < 1:
            raise ValueError("n_samples must be >= 1")
        if self.n_samples > 1 and self.temperature <= 0 and self.solutions == "generate":
            raise ValueError("n_samples > 1 with temperature 0 gives n identical greedy replies: set temperature > 0 (e.g. 0.8)")
        if self.split not in ("", "in_distribution", "held_out"):
            raise ValueError(f"split {self.split!r}: use '', 'in_distribution' or 'held_out'")
        from cuset.evaluate.static_checks import check_policy
        from cuset.evaluate.verdict import check_profile

        check_profile(self.tolerance)
        check_policy(self.static_policy)
        from cuset.evaluate.sanitizer import check_tools

        self.sanitizer_tools = list(check_tools([str(t) for t in self.sanitizer_tools]))
        if self.trials < 1 or self.timeout_s <= 0:
            raise ValueError("trials must be >= 1 and timeout_s > 0")
        from cuset.generate.config import DTYPES, ENGINES, INT8_ENGINES

        if self.batch_size < 1:
            raise ValueError(f"batch_size={self.batch_size}: use at least 1")
        if self.dtype not in DTYPES:
            raise ValueError(f"dtype={self.dtype!r}: use one of {', '.join(DTYPES)}")
        if self.engine not in ENGINES:
            raise ValueError(f"engine={self.engine!r}: use one of {', '.join(ENGINES)}")
        from cuset.generate.config import PROTOCOLS

        if self.protocol not in PROTOCOLS:
            raise ValueError(f"protocol={self.protocol!r}: use one of {', '.join(PROTOCOLS)}")
        if self.protocol != "full" and self.solutions != "generate":
            raise ValueError(f"protocol={self.protocol!r} with solutions={self.solutions!r}: a protocol says what a model is asked "
                             "to write, so it needs solutions='generate'")
        if self.dtype == "int8" and self.engine not in INT8_ENGINES:
            raise ValueError(f"dtype='int8' with engine={self.engine!r}: int8 weights run under engine ctranslate2 only")
        self.levels = [int(x) for x in self.levels]
        self.families = [str(x) for x in self.families]

    # what the job store shows
    @property
    def preset(self) -> str:
        return f"{self.backend}/{self.solutions}"

    @property
    def nproc(self) -> int:
        return 1

    def resolved(self) -> EvalConfig:
        """Method, fine-tune job and label filled in from a job:ID model."""
        cfg = replace(self)
        if cfg.solutions != "generate":
            cfg.method = cfg.method or cfg.solutions
        elif cfg.model.startswith("job:"):
            from cuset.jobs import get

            job_id = int(cfg.model[4:].split("@")[0])
            job = get(job_id)
            cfg.train_job = job_id
            cfg.method = cfg.method or job.method
        else:
            cfg.method = cfg.method or "base"
        cfg.label = cfg.label or f"{cfg.method} {cfg.model if cfg.solutions == 'generate' else cfg.suite}"
        return cfg


def field_help() -> dict[str, str]:
    return {f.name: f.metadata.get("help", "") for f in fields(EvalConfig)}


def select_tasks(config: EvalConfig) -> list[Any]:
    from cuset.evaluate.suite import load_kernelbench, load_suite

    if config.suite == "corpus":
        tasks = corpus_tasks()
        if config.families:
            tasks = [t for t in tasks if t.family in config.families]
    elif config.suite == "bundled":
        tasks = load_suite("bundled", levels=config.levels or None, families=config.families or None, split=config.split or None)
    else:
        tasks = load_kernelbench(config.suite, level=config.levels[0] if len(config.levels) == 1 else None)
        if config.levels:
            tasks = [t for t in tasks if t.level in config.levels]
    return tasks[: config.limit] if config.limit else tasks


def corpus_tasks() -> list[Any]:
    """The bundled training corpus as tasks (its `task` field, its response as the reference):
    `cuset eval --suite corpus --solutions reference` checks every corpus solution with the
    same harness as the evaluation suite."""
    from cuset.data import load
    from cuset.evaluate.suite import Task

    return [Task(id=s.id, level=1, task_text=s.task, family=s.family, split="train", reference_text=s.response, source="corpus")
            for s in load("bundled") if s.task]


def _candidate(task: Any, sample: int, code: str, reply: str = "") -> Candidate:
    return Candidate(task_id=task.id, sample=sample, code=code, task_text=task.task_text, level=task.level,
                     family=task.family or "", split=task.split or "", reply=reply)


def build_candidates(config: EvalConfig, tasks: list[Any], progress: Progress | None = None,
                     generation: dict[str, Any] | None = None) -> list[Candidate]:
    """The candidates of `config.solutions`; for generated ones `generation` (when given) is
    filled with the generation's figures: replies, tokens, seconds, tokens/s, how many ended
    with the end-of-turn token (finished_eos, eos_share), dtype, batch size, engine."""
    if config.solutions == "reference":
        return [_candidate(t, 0, t.reference_text or "") for t in tasks]
    if config.solutions == "wrong":
        return [_candidate(t, i, w.text) for t in tasks for i, w in enumerate(t.wrong)]
    from cuset.generate import GenerateConfig, generate

    gcfg = GenerateConfig(model=config.model, n_samples=config.n_samples, temperature=config.temperature, top_p=config.top_p,
                          seed=config.seed, max_new_tokens=config.max_new_tokens, one_shot=config.one_shot,
                          batch_size=config.batch_size, dtype=config.dtype, engine=config.engine, protocol=config.protocol)
    if progress:  # the job shows "generating" from the start, not after the first batch
        progress("generating", 0, len(tasks) * config.n_samples)
    references = {t.id: t.reference_text or "" for t in tasks} if config.protocol == "kernel-only" else None
    result = generate({t.id: t.task_text for t in tasks}, gcfg,
                      progress=(lambda d, n: progress("generating", d, n)) if progress else None, references=references)
    if generation is not None:
        generation.update(result.stats, eos_share=result.stats["finished_eos"] / max(result.stats["n_replies"], 1))
    by_id = {t.id: t for t in tasks}
    return [_candidate(by_id[tid], g.sample, g.code, g.reply) for tid, gens in result.generations.items() for g in gens]


def summary_of(records: list[dict[str, Any]]) -> dict[str, Any]:
    import pandas as pd

    frame = pd.DataFrame(records)
    if frame.empty:
        return {"candidates": 0}
    overall = summarise(frame).iloc[0].to_dict()
    ks = [k for k in (1, 5, 10) if k <= int(frame.groupby("task_id").size().min())]
    if ks:
        overall.update(pass_at_k_table(frame, ks=ks).iloc[0].to_dict())
    overall["by_level"] = summarise(frame, by=["level"]).to_dict(orient="records")
    overall.update(speedups(frame))
    return {k: (float(v) if hasattr(v, "item") else v) for k, v in overall.items()}


def run_evaluation(config: EvalConfig, progress: Progress | None = None, eval_job: int | None = None, store: ResultStore | None = None) -> int:
    """Generate (or take) candidates, check them all, store every record as it comes; returns
    the run id. A candidate's failure is a record; only our own failures raise."""
    config = config.resolved()
    store = store or ResultStore()
    tasks = select_tasks(config)
    if not tasks:
        raise ValueError("no tasks selected: check levels, families, split and limit")
    run_id = store.create_run(config=config.to_dict(), label=config.label, model=config.model, method=config.method,
                              train_job=config.train_job, eval_job=eval_job, suite=config.suite, backend=config.backend,
                              n_samples=config.n_samples)
    started = time.time()
    generation: dict[str, Any] = {}
    try:
        candidates = build_candidates(config, tasks, progress, generation)
        records = evaluate_candidates(candidates, backend=config.backend, trials=config.trials, timeout=config.timeout_s,
                                      workers=config.workers, on_record=lambda r: store.add_results(run_id, [r]),
                                      tolerance=config.tolerance, static_policy=config.static_policy, sanitizer=config.sanitizer,
                                      sanitizer_tools=tuple(config.sanitizer_tools),
                                      progress=(lambda d, n: progress("checking", d, n)) if progress else None)
    except BaseException as exc:
        store.finish_run(run_id, "failed", {"error": f"{type(exc).__name__}: {exc}"})
        raise
    summary = summary_of(records)
    summary["seconds"] = round(time.time() - started, 1)
    if generation:
        summary["generation"] = generation
    store.finish_run(run_id, "completed", summary)
    return run_id


def submit_evaluation(config: EvalConfig, start: bool = True) -> Any:
    """Queue the evaluation as a background job (cuset.jobs); returns the Job."""
    from cuset.jobs import submit

    return submit(config.resolved(), start=start)


def submit_after_training(train_job: int, train_config: Any, folder: Any) -> list[Any]:
    """Evaluation jobs for a completed fine-tune (TrainConfig.evaluate / eval_every): its final
    model, and every `eval_every`-th saved checkpoint. Returns the queued jobs."""
    from pathlib import Path

    from cuset.jobs import submit

    overrides = dict(train_config.evaluate) if isinstance(train_config.evaluate, dict) else {}
    overrides.pop("model", None)
    specs = [f"job:{train_job}"]
    if train_config.eval_every:
        steps = sorted(int(p.name.split("-")[1]) for p in Path(folder).glob("checkpoints/checkpoint-*") if p.name.split("-")[1].isdigit())
        specs += [f"job:{train_job}@checkpoint-{s}" for s in steps[train_config.eval_every - 1 :: train_config.eval_every]]
    jobs = []
    for spec in specs:
        config = EvalConfig.from_dict({**overrides, "model": spec}, "TrainConfig.evaluate")
        jobs.append(submit(config.resolved(), start=False))
    from cuset.jobs import schedule

    schedule()
    return jobs
