"""Training dynamics by kernel family: per GRPO step, what the batch wrote, how much of it was
correct and what it earned, from a trained arm's `training_samples.jsonl` and `train_log.jsonl`.

    from lab.files import read_jsonl
    from lab.analysis.dynamics import family_dynamics
    family_dynamics(read_jsonl("results/grpo/training_samples.jsonl"), read_jsonl("results/grpo/train_log.jsonl"))

A family (lab.techniques.FAMILIES: none, loop, blocked, simd, fast) is the kind of kernel a
completion holds, from the techniques the reward judged it by. Per step, pooled over the arm's
seeds, each family gets `attempts` (completions of that family), `ok`, `share` (of the step's
completions), `ok_share` (of its ok completions), `success` (ok / attempts) and `mean_reward`
(what writing that family earned under the reward in force: the expected reward GRPO climbs).
Completions with no kernel (format_error) have no family: `no_kernel` counts them. From the
training log, per step: the policy's entropy and the share of groups whose rewards were all
equal (no GRPO signal), each the mean over seeds. `windows` sums the families over the first and
the last fifth of the steps, with the mean entropy and zero-spread share there: a family found
early and lost later shows in them. `markdown_table` renders the windows of several arms.

Warm-start samples (phase `warm_start`) are left out: they are not GRPO's. Samples recorded
without techniques (results older than the record's `techniques` field) give an empty result.
"""

from __future__ import annotations

import statistics
from collections import defaultdict

from lab.techniques import FAMILIES, family

#: What the log contributes per step (TRL's own names), averaged over seeds.
LOG_KEYS = ("entropy", "frac_reward_zero_std")


def _logged(train_log: list[dict]) -> dict[int, dict[str, list[float]]]:
    """Per step, each of LOG_KEYS as the seeds logged it."""
    logged: dict[int, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for entry in train_log:
        for key in LOG_KEYS:
            if entry.get(key) is not None:
                logged[entry["step"]][key].append(float(entry[key]))
    return logged


def log_means(values: dict[str, list[float]]) -> dict[str, float | None]:
    """Each of LOG_KEYS averaged over its values (None without any)."""
    return {key: statistics.fmean(v) if (v := values.get(key)) else None for key in LOG_KEYS}


def final_log_means(train_log: list[dict]) -> dict[str, float | None]:
    """LOG_KEYS at the log's last step, averaged over the seeds (None for an empty log)."""
    logged = _logged(train_log)
    return log_means(logged[max(logged)] if logged else {})


def _tally(rows: list[dict]) -> dict[str, dict]:
    """Per family: attempts, ok, share, ok_share, success and mean_reward over `rows`."""
    n = len(rows)
    n_ok = sum(r["status"] == "ok" for r in rows)
    out = {}
    for name in FAMILIES:
        mine = [r for r in rows if r["family"] == name]
        ok = sum(r["status"] == "ok" for r in mine)
        rewards = [r["reward"] for r in mine if r.get("reward") is not None]
        out[name] = {
            "attempts": len(mine),
            "ok": ok,
            "share": len(mine) / n if n else None,
            "ok_share": ok / n_ok if n_ok else None,
            "success": ok / len(mine) if mine else None,
            "mean_reward": statistics.fmean(rewards) if rewards else None,
        }
    return out


def family_dynamics(training_samples: list[dict], train_log: list[dict] | None = None) -> dict:
    """{"families", "seeds", "steps": [per step], "windows": {"first", "last"}} (see the module
    docstring); {"families", "seeds": [], "steps": [], "windows": {}} when no GRPO sample
    records its techniques."""
    rows = [
        {**r, "family": family(r["techniques"]) if r["techniques"] is not None else None}
        for r in training_samples
        if r.get("phase", "grpo") == "grpo" and "techniques" in r
    ]
    if not rows:
        return {"families": list(FAMILIES), "seeds": [], "steps": [], "windows": {}}
    by_step: dict[int, list[dict]] = defaultdict(list)
    for r in rows:
        by_step[r["step"]].append(r)
    logged = _logged(train_log or [])
    steps = []
    for step in sorted(by_step):
        batch = by_step[step]
        steps.append(
            {
                "step": step,
                "n": len(batch),
                "seeds": len({r.get("seed", 0) for r in batch}),
                "no_kernel": sum(r["family"] is None for r in batch),
                **log_means(logged[step]),
                "families": _tally(batch),
            }
        )
    ordered = sorted(by_step)
    fifth = max(1, len(ordered) // 5)
    windows = {}
    for name, part in (("first", ordered[:fifth]), ("last", ordered[-fifth:])):
        windows[name] = {
            "steps": [part[0], part[-1]],
            **log_means({key: [v for s in part for v in logged[s][key]] for key in LOG_KEYS}),
            "families": _tally([r for s in part for r in by_step[s]]),
        }
    return {
        "families": list(FAMILIES),
        "seeds": sorted({r.get("seed", 0) for r in rows}),
        "steps": steps,
        "windows": windows,
    }


def _pct(x: float | None) -> str:
    return "—" if x is None else f"{x:.0%}"


def _num(x: float | None, digits: int = 2) -> str:
    return "—" if x is None else f"{x:.{digits}f}"


def markdown_table(arms: dict[str, dict], names: dict[str, str] | None = None) -> str:
    """One row per arm (its `family_dynamics`) and family it wrote: the family's share of the
    completions, its success rate and its mean reward in the first and the last fifth of the
    steps, with the arm's entropy and zero-spread share in those windows on its first row.
    `names` labels the arms (default: their keys)."""
    header = (
        "| arm | entropy (nats/token), first → last fifth | groups with no reward spread | family "
        "| share of completions | ok of its attempts | mean reward |"
    )
    lines = [header, "|---|---|---|---|---|---|---|"]
    for arm, d in arms.items():
        first, last = d["windows"]["first"], d["windows"]["last"]
        written = [f for f in d["families"] if first["families"][f]["attempts"] or last["families"][f]["attempts"]]
        for i, fam in enumerate(written):
            a, b = first["families"][fam], last["families"][fam]
            lead = (
                f"{(names or {}).get(arm, arm)} | {_num(first['entropy'])} → {_num(last['entropy'])} "
                f"| {_pct(first['frac_reward_zero_std'])} → {_pct(last['frac_reward_zero_std'])}"
                if i == 0
                else " | |"
            )
            lines.append(
                f"| {lead} | {fam} | {_pct(a['share'])} → {_pct(b['share'])} "
                f"| {_pct(a['success'])} → {_pct(b['success'])} "
                f"| {_num(a['mean_reward'], 1)} → {_num(b['mean_reward'], 1)} |"
            )
    return "\n".join(lines)
