"""Whether a finished result still stands: provenance compared with what would make it now.

    facts = provenance(cfg)                    # what the runner writes into config.json
    judge(read_json(out_dir / "config.json"), cfg)   # {"state": "current", ...}

A result records what made it (`provenance`): the measurement version of the code
(lab.provenance), the git commit and whether the tree was dirty, the machine (CPU model,
compiler, fingerprint, class), the sha256 of the policy's weights, and the date. It is
*current* when four things match what a run would use now, and reused only then:

- the machine class (else `other_machine`: it stands for the machine that made it);
- the measurement version (else `older_code`, naming the commit that made it);
- the policy's weights, where both the result and this checkout know them (a config names
  only a path; a result from before weights were recorded is judged by the rest);
- the resolved config, normalised: what equals the default is left out on both sides, so a
  new field at its default changes nothing, while a changed default stales what used it.

What describes a run rather than sets it up (where its results go, its commit, machine,
prompts, compute) is not compared. A result that lacks a measurement version (written before
it was recorded) is `older_code`. Training checkpoints are stricter: they are resumed only by
the code that wrote them (lab.pipeline.runner).
"""

from __future__ import annotations

from lab.config import ExperimentConfig, non_default_settings
from lab.harness.machine import machine_class, machine_summary
from lab.harness.sandbox import isolation_level
from lab.provenance import measurement_version, policy_sha256
from lab.results import RUN_FACTS, recorded_class, recorded_target, report_provenance

STATES = ("current", "older_code", "other_machine")


def provenance(cfg: ExperimentConfig) -> dict:
    """The facts the runner records beside an experiment's config (config.json): those of every
    result (lab.results.report_provenance), the machine's summary and the sandbox's isolation."""
    return {**report_provenance(cfg.model), "machine": machine_summary(), "isolation": isolation_level()}


def normalised_config(saved: dict) -> dict:
    """A saved config (config.json, or ExperimentConfig.to_dict) as reuse compares it, flat
    (`train.steps`: value): run facts out, and every setting at its current default out."""
    return non_default_settings({k: v for k, v in saved.items() if k not in RUN_FACTS})


def config_differences(saved: dict, cfg: ExperimentConfig, compare_model: bool = True) -> list[str]:
    """The settings (key paths) in which a saved config and `cfg` differ, both normalised."""
    a, b = normalised_config(saved), normalised_config(cfg.to_dict())
    if not compare_model:
        a.pop("model", None), b.pop("model", None)
    return sorted(k for k in set(a) | set(b) if a.get(k, ...) != b.get(k, ...))


def measuring_class(cfg: ExperimentConfig | None) -> str:
    """The machine class that would measure `cfg` now: this machine's, or for a run on a Dask
    cluster the class of the workers the cluster accepts, which connecting to it tells (the
    workers measure, not this client; lab.harness.cluster). Raises ClusterError, one line, when
    the scheduler cannot be reached or has no worker it can accept."""
    if cfg is None or cfg.compute.backend != "dask":
        return machine_class()
    from lab.harness import cluster  # only for a cluster run: importing distributed is slow
    from lab.harness.evaluate import worker_facts

    return cluster.connect(cfg.compute.address, worker_facts, measurement_version()).cluster_machine()


def judge(
    saved: dict, cfg: ExperimentConfig | None = None, machine: str | None = None, policy: str | None = None
) -> dict:
    """The state of a result whose config.json is `saved`, for this checkout and machine (or
    `machine`), and against `cfg` when given: {"state", "reason", "code", "commit", "machine",
    "target", "seed_policy"}; state is one of STATES, and "config_changes" lists the settings in which it
    differs from `cfg` (a result of another config is never reused, whatever its state). The
    policy compared is `cfg.model`, or `policy` (a report's model) without a config."""
    summary = saved.get("machine") if isinstance(saved.get("machine"), dict) else {}
    recorded_machine = recorded_class(saved)
    out = {
        "code": saved.get("measurement"),
        "commit": saved.get("git_commit"),
        "dirty": saved.get("dirty"),
        "machine": recorded_machine,
        "target": recorded_target(saved),
        "seed_policy": saved.get("policy_sha256"),
        "date": saved.get("date") or summary.get("date"),
    }
    here = machine or measuring_class(cfg)
    if not recorded_machine:
        out |= {"state": "older_code", "reason": "no machine recorded"}
    elif recorded_machine != here:
        out |= {"state": "other_machine", "reason": f"measured on machine {recorded_machine}, this is {here}"}
    elif saved.get("measurement") != measurement_version():
        made = f"commit {(saved.get('git_commit') or 'unknown')[:12]}"
        why = "no measurement version recorded" if not saved.get("measurement") else "other measuring code"
        out |= {"state": "older_code", "reason": f"{why} ({made})"}
    else:
        out |= {"state": "current", "reason": "same measuring code, machine and policy"}
    model = cfg.model if cfg is not None else policy
    local = policy_sha256(model) if model else None
    recorded = saved.get("policy_sha256")
    known = local is not None and recorded is not None
    if known and local != recorded and out["state"] == "current":
        out |= {"state": "older_code", "reason": f"made by another policy (sha256 {recorded[:12]})"}
    elif recorded is not None and local is None and out["state"] == "current":
        # A hub id not on disk, or a local policy not built here yet: said, not hidden.
        out["reason"] += f"; the policy's weights were not compared ({model or 'no model'} is not on disk here)"
    if cfg is not None:
        out["config_changes"] = config_differences(saved, cfg, compare_model=not known)
    return out


def reusable(saved: dict, cfg: ExperimentConfig) -> tuple[bool, str]:
    """(True, why) when a finished result of `cfg` may be reused here; (False, why not) else."""
    verdict = judge(saved, cfg)
    if verdict["config_changes"]:
        return False, f"made with another {', '.join(verdict['config_changes'])}"
    return verdict["state"] == "current", verdict["reason"]
