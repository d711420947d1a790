"""Staged Quality-Diversity (SQD): stages, per-problem permitted sets, and the QD archive.

This is the lab's reading of the paper's SQD, not a copy of its code:

- techniques T = those that apply to the problem (lab.techniques.problem_techniques:
  all 7 for DGEMM, 3-4 for the other problems); everything below is per problem;
- a training prompt is (problem, permitted subset P of T), stated in the prompt
  text (lab.policy.prompts.prompt_text); in a suite, also an execution model (a
  serial prompt never permits OpenMP);
- stage s (1-based) permits subsets of size <= s; the last stage permits all of T
  that the problem's prompts can use (no OpenMP for a problem trained in serial mode
  only); cumulative stages (the curriculum) add one technique of an order per stage;
- each prompt's P is sampled per problem from the current stage, favouring
  subsets whose archive cell is empty or weak;
- the archive is MAP-Elites style (a pyribs GridArchive with one binary measure
  per technique): descriptor = the techniques detected in correct code, elite =
  the best-GFLOPS source per cell; stats = coverage, QD score, best;
- code that uses a technique outside P is `forbidden` (`permission_violation`,
  applied by the GRPO reward, lab.rl.reward.HarnessReward); with `ask: require` the
  prompt asks for every technique of P, and correct code that lacks one breaks it too
  (`requirement_violation`), judged on what its object shows: permitting a technique
  never asks for it, so a permitted-set prompt is most easily met by using none;
- stages advance on a step budget or when the archive covers a share of the
  cells reachable in the current stage;
- a prompt's wording is a training phrasing (in turn), or the caller's `wording` of each
  row (lab.rl.train rewords them as the seed corpus words its prompts, with train.reword).

`SQDSchedule` ties these together for a training run: one archive and one staged
sampler per problem, and `rows()`, the endless prompt stream GRPO trains on (each
row drawn when the trainer asks for it, so the stage and the archive change the
prompts as training goes), plus `state_dict`/`load_state_dict` for checkpoints.

    >>> archive = TechniqueArchive()
    >>> archive.add(frozenset({"simd"}), 12.0, "...")
    True
    >>> archive.stats()["coverage"], archive.stats()["best"]
    (0.0078125, 12.0)
"""

from __future__ import annotations

import itertools
import random
import warnings
from collections.abc import Callable, Iterable, Iterator, Sequence, Set

import numpy as np

from lab.config import SQDConfig
from lab.policy.prompts import prompt_text
from lab.techniques import TECHNIQUES, problem_techniques


def _bits(techniques: frozenset[str], order: Sequence[str] = TECHNIQUES) -> list[float]:
    return [1.0 if t in techniques else 0.0 for t in order]


def descriptor(techniques: frozenset[str] | Sequence[str]) -> str:
    """A technique set as one readable name, in taxonomy order: "simd+openmp", or "none"."""
    return "+".join(t for t in TECHNIQUES if t in techniques) or "none"


class TechniqueArchive:
    """MAP-Elites archive over technique sets, on pyribs' GridArchive (2 bins per technique).

    `techniques` are the archive's measures: those that apply to its problem
    (lab.techniques.problem_techniques), so coverage counts only the cells the problem
    can fill. pyribs keeps the numeric side (elites, thresholds, coverage, QD score);
    sources are text, which pyribs' arrays do not hold, so they live in a dict keyed by cell.
    """

    def __init__(self, techniques: Sequence[str] = TECHNIQUES) -> None:
        # Imported here: pyribs loads torch and scikit-learn (about 2 s), which commands that only
        # score kernels (`lab score`) should not pay for.
        from ribs.archives import GridArchive

        unknown = set(techniques) - set(TECHNIQUES)
        if unknown or not techniques:
            raise ValueError(f"archive techniques must be a non-empty subset of {', '.join(TECHNIQUES)}")
        self.techniques = tuple(t for t in TECHNIQUES if t in techniques)
        n = len(self.techniques)
        self._archive = GridArchive(solution_dim=1, dims=[2] * n, ranges=[(0.0, 1.0)] * n)
        self._sources: dict[int, str] = {}
        self._sets: dict[int, frozenset[str]] = {}

    def _index(self, techniques: frozenset[str]) -> int:
        return int(self._archive.index_of(np.array([_bits(techniques, self.techniques)]))[0])

    def add(self, techniques: frozenset[str], gflops: float, source: str) -> bool:
        """Offer a correct kernel; True if it became its cell's elite. Techniques outside the
        archive's are refused (ValueError): the caller detects with the problem's techniques."""
        outside = set(techniques) - set(self.techniques)
        if outside:
            raise ValueError(
                f"{', '.join(sorted(outside))} outside this archive's techniques ({', '.join(self.techniques)})"
            )
        bits = np.array([_bits(techniques, self.techniques)])
        status = self._archive.add(np.array([[0.0]]), np.array([gflops]), bits)["status"]
        improved = int(status[0]) > 0
        if improved:
            idx = self._index(techniques)
            self._sources[idx], self._sets[idx] = source, frozenset(techniques)
        return improved

    def best(self, techniques: frozenset[str]) -> float | None:
        return self.best_of([techniques])[0]

    def best_of(self, sets: Sequence[frozenset[str]]) -> list[float | None]:
        """The elite GFLOPS of each set's cell (None where empty), with one read of the archive."""
        if not sets:
            return []
        data = self._archive.data()
        filled = dict(zip(data["index"].tolist(), data["objective"].tolist()))
        cells = self._archive.index_of(np.array([_bits(t, self.techniques) for t in sets]))
        return [filled.get(int(i)) for i in cells]

    def elite_source(self, techniques: frozenset[str]) -> str | None:
        return self._sources.get(self._index(techniques))

    def cells(self) -> dict[str, float]:
        """Descriptor ("simd+openmp", "none") -> best GFLOPS, for every filled cell, best first."""
        return {e["descriptor"]: e["gflops"] for e in self.elites()}

    def elites(self) -> list[dict]:
        """Every elite (descriptor, techniques, GFLOPS, source), best first; `from_elites` takes it back."""
        data = self._archive.data()
        out = [
            {
                "descriptor": descriptor(self._sets[int(idx)]),
                "techniques": [t for t in TECHNIQUES if t in self._sets[int(idx)]],
                "gflops": float(obj),
                "source": self._sources[int(idx)],
            }
            for idx, obj in zip(data["index"], data["objective"])
        ]
        return sorted(out, key=lambda e: -e["gflops"])

    @classmethod
    def from_elites(cls, elites: list[dict], techniques: Sequence[str] = TECHNIQUES) -> TechniqueArchive:
        """An archive holding `elites` (from `elites()`, e.g. a checkpoint). Elites that use a
        technique outside `techniques` (saved before the problem's declaration changed) are
        dropped with a warning: they have no cell here."""
        archive = cls(techniques)
        for e in elites:
            if not set(e["techniques"]) <= set(archive.techniques):
                warnings.warn(
                    f"archive: dropped the elite {e['descriptor']!r}, outside {archive.techniques}", stacklevel=2
                )
                continue
            archive.add(frozenset(e["techniques"]), e["gflops"], e["source"])
        return archive

    def stats(self) -> dict:
        s = self._archive.stats
        return {
            "coverage": float(s.coverage),
            "qd_score": float(s.qd_score),
            "cells_filled": int(s.num_elites),
            "best": float(s.obj_max) if s.num_elites else None,
        }


def subsets_up_to(size: int, techniques: Sequence[str] = TECHNIQUES) -> list[frozenset[str]]:
    return [frozenset(c) for k in range(0, size + 1) for c in itertools.combinations(techniques, k)]


class StagedSampler:
    """Which permitted sets the prompts of the current stage state, and when the stage advances.
    The sets are subsets of the archive's techniques (those of its problem).

    Two stage rules (SQDConfig.stages): "size", stage s permits every subset of at most s
    techniques; "cumulative", stage s permits every subset of the first `start + s - 1`
    techniques of the config's `order` (those that apply to the problem, then the rest in
    registry order). Either way the last stage permits every subset. A stage ends after
    `steps_per_stage` steps, when its cells are covered to `coverage_to_advance`, or when
    none of its cells improved for `plateau_steps` of the steps that trained on its prompts,
    whichever comes first. Techniques in `unusable` (OpenMP for a problem trained in serial
    mode only, where no kernel can fill its cells) are never permitted and never staged.
    """

    def __init__(self, config: SQDConfig, archive: TechniqueArchive, seed: int = 0, unusable: Set[str] = frozenset()):
        self.config, self.archive, self.rng = config, archive, random.Random(seed)
        unknown = [t for t in config.order if t not in TECHNIQUES]
        if unknown:
            raise ValueError(f"sqd.order: unknown technique(s) {', '.join(unknown)}; known: {', '.join(TECHNIQUES)}")
        self.usable = tuple(t for t in archive.techniques if t not in unusable)
        listed = [t for t in config.order if t in self.usable]
        self.order = tuple(listed + [t for t in self.usable if t not in listed])
        self.stage, self.steps_in_stage, self.steps_without_gain = 1, 0, 0
        self._bests = self._stage_bests()
        self.history: list[dict] = [{"step": 0, "stage": 1}]

    @property
    def last_stage(self) -> int:
        if self.config.stages == "cumulative":
            return max(1, len(self.order) - min(self.config.start, len(self.order)) + 1)
        return max(1, len(self.usable))

    def permitted_sets(self) -> list[frozenset[str]]:
        """The subsets the current stage permits (the last stage: every subset of the usable
        techniques, all of them included)."""
        if self.config.stages == "cumulative":
            allowed = self.order[: self.config.start + self.stage - 1]
            return subsets_up_to(len(allowed), allowed)
        return subsets_up_to(self.stage, self.usable)

    def _weight(self, best: float | None, median: float | None) -> float:
        if best is None:
            return self.config.empty_weight
        return self.config.weak_weight if median is not None and best < median else self.config.strong_weight

    def sample(self, k: int = 1, exclude: Set[str] = frozenset()) -> list[frozenset[str]]:
        """k permitted sets for this step's prompts, favouring empty or weak cells; sets that use
        a technique in `exclude` (OpenMP for a serial prompt) are left out before weighting, so
        a prompt is steered only towards cells it can fill."""
        options = [o for o in self.permitted_sets() if not o & exclude]
        bests = self.archive.best_of(options)
        filled = [b for b in bests if b is not None]
        median = float(np.median(filled)) if filled else None
        return self.rng.choices(options, weights=[self._weight(b, median) for b in bests], k=k)

    def stage_coverage(self, bests: Sequence[float | None] | None = None) -> float:
        """The share of the stage's cells filled (`bests`: their elites, if already looked up)."""
        bests = self._stage_bests() if bests is None else bests
        return sum(b is not None for b in bests) / len(bests)

    def _stage_bests(self) -> tuple:
        return tuple(self.archive.best_of(self.permitted_sets()))

    def end_step(self, step: int, drawn: bool = True) -> bool:
        """Call after each training step (`drawn`: the step trained on prompts of this problem);
        returns True when the stage advanced. A step without this problem's prompts cannot
        improve its archive, so it does not count toward a plateau."""
        self.steps_in_stage += 1
        bests = self._stage_bests()
        if drawn:
            self.steps_without_gain = 0 if bests != self._bests else self.steps_without_gain + 1
        self._bests = bests
        if self.stage >= self.last_stage:
            return False
        c = self.config
        reasons = [
            name
            for name, hit in (
                ("budget", c.steps_per_stage is not None and self.steps_in_stage >= c.steps_per_stage),
                ("coverage", c.coverage_to_advance is not None and self.stage_coverage(bests) >= c.coverage_to_advance),
                ("plateau", c.plateau_steps is not None and self.steps_without_gain >= c.plateau_steps),
            )
            if hit
        ]
        if not reasons:
            return False
        self.stage += 1
        self.steps_in_stage = self.steps_without_gain = 0
        self._bests = self._stage_bests()
        # The first rule that ended the stage, in the order budget, coverage, plateau.
        self.history.append({"step": step, "stage": self.stage, "reason": reasons[0]})
        return True


def _rng_state(rng: random.Random) -> list:
    version, internal, gauss = rng.getstate()
    return [version, list(internal), gauss]


class SQDSchedule:
    """The live state of an SQD training run: per problem, an archive and a staged sampler.

    `rows()` is the prompt stream: an endless generator, each row drawn only when the
    trainer pulls it, from the current stage and archive. Each row carries its id and
    the stage it was drawn in. Scored kernels reach the archives from the reward
    function (lab.rl.reward.HarnessReward); after each training step, `end_step` advances
    the stages and forgets the rows that were trained on. Rows drawn ahead of training
    (the dataloader fetches a batch early) are `pending`: a checkpoint keeps them, and a
    resumed stream yields them first, so a resumed run sees the prompts the killed one
    would have seen.
    """

    def __init__(
        self,
        problems: Sequence[str],
        config: SQDConfig | None = None,
        seed: int = 0,
        archives: dict[str, TechniqueArchive] | None = None,
        entries: Sequence[tuple[str, str, float]] | None = None,
        threads: int = 2,
        wording: Callable[[str, str | None, int], int | str] | None = None,
    ):
        """`entries` (problem, mode, weight), a suite: each row is one of them, drawn by weight,
        and its prompt states the mode (`threads` for OpenMP; serial prompts never permit
        OpenMP). None: the problems in turn, with their own prompts (no mode, no mode column).
        `wording` (problem, mode, row number) -> the row's `phrasing` (lab.policy.prompts.prompt_text),
        a function of its arguments alone, so that a resumed stream words its rows as the killed
        one would have. None: the training phrasings in turn (row number modulo their number)."""
        if not problems:
            raise ValueError("SQD needs at least one problem")
        self.problems, self.config = list(problems), config or SQDConfig()
        self.entries = list(entries) if entries is not None else None
        if self.entries is not None and {p for p, _, _ in self.entries} - set(self.problems):
            raise ValueError("every suite entry's problem must be one of the schedule's problems")
        self.threads, self.wording = threads, wording
        self.archives = (
            archives if archives is not None else {p: TechniqueArchive(problem_techniques(p)) for p in self.problems}
        )
        self.samplers = {
            p: StagedSampler(self.config, self.archives[p], seed=seed * 1009 + i, unusable=self._unusable(p))
            for i, p in enumerate(self.problems)
        }
        self.entry_rng = random.Random(seed * 7919 + 17)  # which suite entry each row is
        self.next_row = 0
        self.pending: list[dict] = []  # drawn, not yet trained on

    def _unusable(self, problem: str) -> frozenset[str]:
        """OpenMP, if every entry of `problem` is serial: its prompts never permit it."""
        modes = {m for p, m, _ in self.entries or () if p == problem}
        return frozenset({"openmp"}) if modes == {"serial"} else frozenset()

    def _entry(self) -> tuple[str, str | None]:
        if self.entries is None:
            return self.problems[self.next_row % len(self.problems)], None
        problem, mode, _ = self.entry_rng.choices(self.entries, weights=[w for _, _, w in self.entries])[0]
        return problem, mode

    def rows(self) -> Iterator[dict]:
        """Training rows: id, the prompt (stating its permitted set), problem, the set, stage, and
        (for a suite) the execution model."""
        yield from list(self.pending)
        while True:
            problem, mode = self._entry()
            sampler = self.samplers[problem]
            # A free prompt (SQDConfig.free_share) is the plain one: no techniques sentence, nothing forbidden.
            free = self.config.free_share > 0 and sampler.rng.random() < self.config.free_share
            permitted = None if free else sampler.sample(1, exclude={"openmp"} if mode == "serial" else frozenset())[0]
            row = {
                "row": self.next_row,
                "prompt": [
                    {
                        "role": "user",
                        "content": prompt_text(
                            problem,
                            permitted,
                            mode,
                            self.threads,
                            phrasing=self.wording(problem, mode, self.next_row) if self.wording else self.next_row,
                            required=self.config.ask == "require",
                        ),
                    }
                ],
                "problem": problem,
                "permitted": None if permitted is None else [t for t in TECHNIQUES if t in permitted],
                "stage": sampler.stage,
            }
            if self.entries is not None:
                row["mode"] = mode
            self.next_row += 1
            self.pending.append(row)
            yield row

    def end_step(self, step: int, trained_rows: Iterable[int] = (), final: bool = False) -> None:
        """After training step `step` on `trained_rows`: forget those rows and, unless it was
        the run's last step (nothing would train on a new stage), let the stages advance."""
        trained_rows = list(trained_rows)
        done = max(trained_rows, default=-1)
        # Without row ids (a caller that does not track them) every problem counts as drawn.
        drawn = {r["problem"] for r in self.pending if r["row"] <= done} if trained_rows else set(self.samplers)
        self.pending = [r for r in self.pending if r["row"] > done]
        if not final:
            for problem, sampler in self.samplers.items():
                sampler.end_step(step, drawn=problem in drawn)

    def stages(self) -> dict[str, int]:
        return {p: s.stage for p, s in self.samplers.items()}

    def history(self) -> dict[str, list[dict]]:
        return {p: list(s.history) for p, s in self.samplers.items()}

    def state_dict(self) -> dict:
        """Samplers (stage, step count, history, RNG), the next row id and the pending rows;
        the archives are saved on their own."""
        return {
            "samplers": {
                p: {
                    "stage": s.stage,
                    "steps_in_stage": s.steps_in_stage,
                    "steps_without_gain": s.steps_without_gain,
                    "history": s.history,
                    "rng": _rng_state(s.rng),
                }
                for p, s in self.samplers.items()
            },
            "next_row": self.next_row,
            "pending": self.pending,
            "entry_rng": _rng_state(self.entry_rng),
        }

    def load_state_dict(self, state: dict) -> None:
        for p, sampler in self.samplers.items():
            saved = state["samplers"][p]
            sampler.stage, sampler.steps_in_stage = saved["stage"], saved["steps_in_stage"]
            sampler.steps_without_gain = saved.get("steps_without_gain", 0)
            sampler._bests = sampler._stage_bests()  # the archive is restored before the schedule
            sampler.history = list(saved["history"])
            version, internal, gauss = saved["rng"]
            sampler.rng.setstate((version, tuple(internal), gauss))
        self.next_row, self.pending = state["next_row"], list(state["pending"])
        if "entry_rng" in state:
            version, internal, gauss = state["entry_rng"]
            self.entry_rng.setstate((version, tuple(internal), gauss))


def permission_violation(used: Set[str], permitted: Iterable[str] | None) -> str | None:
    """Why code using the techniques `used` breaks the prompt's permitted set, or None.

    >>> permission_violation({"simd", "openmp"}, ["simd"])
    'uses openmp, which the prompt did not permit'
    """
    if permitted is None:
        return None
    extra = set(used) - set(permitted)
    if not extra:
        return None
    return f"uses {', '.join(t for t in TECHNIQUES if t in extra)}, which the prompt did not permit"


def requirement_violation(used: Set[str], required: Iterable[str] | None) -> str | None:
    """Why code using the techniques `used` falls short of the prompt's required set, or None.

    >>> requirement_violation({"loop_reorder"}, ["simd", "loop_reorder"])
    'lacks simd, which the prompt required'
    """
    if required is None:
        return None
    missing = set(required) - set(used)
    if not missing:
        return None
    return f"lacks {', '.join(t for t in TECHNIQUES if t in missing)}, which the prompt required"
