#!/usr/bin/env python3
"""Runs the soak's shards as a Slurm job array (make sim-long SLURM=1).

The tasks are the CTest tests of a label (--ctest BUILD --label REGEX: each test's command,
environment and working directory, exactly what `ctest` would run) or the lines of a file, one
shell command each (--commands FILE). One `sbatch --wait --array` job runs them, a task each, on
whatever cluster SLURM_CONF (or the default configuration) names; every task writes its log and
exit status under --work-dir. Prints a line per failed task with its log, then
`N passed, N failed`; exits 1 when a task failed, 2 when nothing could be submitted.

  scripts/soak_slurm.py --ctest build --label '^soak$' --work-dir build/soak/slurm
  scripts/soak_slurm.py task build/soak/slurm/tasks.json    # inside a task: run task $SLURM_ARRAY_TASK_ID
"""
import argparse
import json
import os
import shlex
import subprocess
import sys


def tasks_from_ctest(build_dir, label):
    out = subprocess.run(["ctest", "--show-only=json-v1", "-L", label], cwd=build_dir,
                         check=True, capture_output=True, text=True).stdout
    tasks = []
    for test in json.loads(out).get("tests", []):
        props = {p["name"]: p["value"] for p in test.get("properties", [])}
        env = dict(entry.split("=", 1) for entry in props.get("ENVIRONMENT", []))
        tasks.append({"name": test["name"], "command": test["command"], "env": env,
                      "cwd": props.get("WORKING_DIRECTORY", os.path.abspath(build_dir))})
    return tasks


def tasks_from_file(path):
    tasks = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if line and not line.startswith("#"):
                tasks.append({"name": f"line {len(tasks) + 1}", "command": ["bash", "-c", line],
                              "env": {}, "cwd": os.getcwd()})
    return tasks


def run_task(tasks_path):
    """Inside a Slurm task: runs task SLURM_ARRAY_TASK_ID and records its exit status."""
    index = int(os.environ["SLURM_ARRAY_TASK_ID"])
    with open(tasks_path, encoding="utf-8") as f:
        task = json.load(f)[index]
    print(f"task {index}: {task['name']}: {shlex.join(task['command'])}", flush=True)
    rc = subprocess.run(task["command"], cwd=task["cwd"], env={**os.environ, **task["env"]}).returncode
    with open(os.path.join(os.path.dirname(tasks_path), f"task-{index}.status"), "w") as f:
        f.write(f"{rc}\n")
    return rc


def submit(tasks, work_dir, max_parallel):
    work_dir = os.path.abspath(work_dir)
    os.makedirs(work_dir, exist_ok=True)
    for name in os.listdir(work_dir):
        if name.startswith("task-"):
            os.remove(os.path.join(work_dir, name))
    tasks_path = os.path.join(work_dir, "tasks.json")
    with open(tasks_path, "w", encoding="utf-8") as f:
        json.dump(tasks, f, indent=1)
    array = f"0-{len(tasks) - 1}" + (f"%{max_parallel}" if max_parallel else "")
    wrap = shlex.join([sys.executable, os.path.abspath(__file__), "task", tasks_path])
    command = ["sbatch", "--wait", "--parsable", f"--array={array}", "--job-name=nmsa-soak",
               "--ntasks=1", "--cpus-per-task=1", f"--output={work_dir}/task-%a.log", "--wrap", wrap]
    print(f"soak_slurm: {len(tasks)} tasks as Slurm array {array}", flush=True)
    try:
        job = subprocess.run(command, check=False, capture_output=True, text=True)
    except OSError as e:
        print(f"soak_slurm: cannot run sbatch: {e} (scripts/setup.sh installs Slurm)", file=sys.stderr)
        return 2

    if job.stdout.strip():
        print(f"soak_slurm: Slurm job {job.stdout.strip()} ended with exit status {job.returncode}")
    if job.stderr.strip():
        print(job.stderr.strip(), file=sys.stderr)

    passed = failed = 0
    for index, task in enumerate(tasks):
        status_path = os.path.join(work_dir, f"task-{index}.status")
        log_path = os.path.join(work_dir, f"task-{index}.log")
        try:
            with open(status_path, encoding="utf-8") as f:
                rc = int(f.read())
        except (OSError, ValueError):
            rc = None  # the task never ran to its end (cancelled, killed, never scheduled)
        if rc == 0:
            passed += 1
            continue
        failed += 1
        why = "no exit status recorded" if rc is None else f"exit status {rc}"
        print(f"FAIL {task['name']}: {why}, log {log_path}")
    print(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


def main(argv):
    if argv[:1] == ["task"]:
        return run_task(argv[1])
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    source = ap.add_mutually_exclusive_group(required=True)
    source.add_argument("--ctest", metavar="BUILD", help="the tests of --label in this build directory")
    source.add_argument("--commands", metavar="FILE", help="one shell command per line")
    ap.add_argument("--label", default="^soak$", help="CTest label regular expression")
    ap.add_argument("--work-dir", required=True, help="the task list, logs and exit statuses")
    ap.add_argument("--max-parallel", type=int, default=0, help="tasks running at once (0: Slurm's choice)")
    args = ap.parse_args(argv)
    try:
        tasks = tasks_from_ctest(args.ctest, args.label) if args.ctest else tasks_from_file(args.commands)
    except (OSError, ValueError, subprocess.CalledProcessError) as e:
        print(f"soak_slurm: cannot list the tasks: {e}", file=sys.stderr)
        return 2
    if not tasks:
        print("soak_slurm: no tasks to run", file=sys.stderr)
        return 2
    return submit(tasks, args.work_dir, args.max_parallel)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
