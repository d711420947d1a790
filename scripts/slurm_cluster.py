"""Start Dask workers as SLURM jobs and keep their scheduler up (docs/cluster.md).

    pip install -e ".[slurm]"                       # dask-jobqueue
    cp docs/cluster/jobqueue.yaml ~/.config/dask/   # and edit it for your site
    python scripts/slurm_cluster.py --nodes 4       # prints the scheduler address, then waits

The scheduler runs in this process (dask-jobqueue's design), so keep it running (tmux,
screen, or a small SLURM job of its own) while `lab` measures through it:

    lab score-batch completions.jsonl --out scored.jsonl --dask tcp://HEAD:8786
    lab run --config configs/default.yaml --experiment grpo \
        --set compute.backend=dask --set compute.address=tcp://HEAD:8786

Ctrl-C cancels the jobs and stops the scheduler.
"""

from __future__ import annotations

import argparse
import time


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=2, help="SLURM jobs (one worker per node)")
    parser.add_argument("--wait", type=float, default=600.0, help="seconds to wait for the first worker")
    parser.add_argument("--show-script", action="store_true", help="print the job script and exit")
    args = parser.parse_args()

    from dask_jobqueue import SLURMCluster
    from distributed import Client

    cluster = SLURMCluster()  # every setting from ~/.config/dask/jobqueue.yaml
    try:
        if args.show_script:
            print(cluster.job_script())
            return 0
        cluster.scale(jobs=args.nodes)
        with Client(cluster) as client:
            print(f"scheduler: {cluster.scheduler_address}  (waiting for workers)", flush=True)
            client.wait_for_workers(1, timeout=args.wait)
            while True:
                workers = client.scheduler_info(n_workers=-1)["workers"].values()
                print(f"{len(workers)} worker(s): {', '.join(sorted(w['host'] for w in workers))}", flush=True)
                time.sleep(60)
    except KeyboardInterrupt:
        return 0
    finally:
        cluster.close()  # cancels the jobs


if __name__ == "__main__":
    raise SystemExit(main())
