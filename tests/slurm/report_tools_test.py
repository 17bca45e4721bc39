# The report tools on two small results files written here with h5py in the layout of README "Results":
# plots.py and summary.py must produce the PNGs and a summary page naming both runs (table by fusetrain).
"""Usage: python report_tools_test.py FUSETRAIN_BINARY SOURCE_DIR WORK_DIR"""
import pathlib
import shutil
import subprocess
import sys

try:
    import h5py
    import matplotlib  # noqa: F401  (summary.py needs it)
    import numpy as np
except ImportError as missing:
    print(f"SKIP: {missing}: run tools/setup.sh, which installs the report tools' packages")
    sys.exit(77)


def write_results(path: pathlib.Path, name: str, ranks: int, batch: int, epochs: int, gpu_samples: int) -> None:
    config = f"model:\n  name: simple_cnn\ndata:\n  batch_size: {batch}\noptimizer:\n  name: sgd\n"
    e = np.arange(1, epochs + 1)
    strings = h5py.string_dtype()
    with h5py.File(path, "w") as f:
        for key, value in {"format": "fusetrain-results", "name": name, "model": "simple_cnn",
                           "dataset": "fashion-mnist", "precision": "fp32"}.items():
            f.attrs.create(key, value, dtype=strings)
        f.attrs["format_version"] = np.int64(1)
        f.attrs["batch_size"] = np.int64(batch)
        f.create_dataset("config", data=[config], dtype=strings)
        p = f.create_group("provenance")
        for key in ("program_version", "git_commit", "torch_version", "cuda_version", "mpi_version",
                    "command_line", "started_at", "backend"):
            p.attrs.create(key, "mpi" if key == "backend" else f"test-{key}", dtype=strings)
        p.attrs["world_size"] = np.int64(ranks)
        p.attrs["node_count"] = np.int64(1)
        g = f.create_group("epochs")
        g["epoch"] = e.astype(np.int32)
        g["evaluated"] = np.ones(epochs, np.int32)
        g["train_loss"] = 1.0 / e
        g["train_acc"] = 0.5 + 0.4 * (1 - 1.0 / e)
        g["test_loss"] = 1.1 / e
        g["test_acc"] = 0.45 + 0.4 * (1 - 1.0 / e)
        g["lr"] = np.full(epochs, 0.05)
        g["epoch_time_s"] = np.full(epochs, 2.0)
        g["images_per_s"] = np.full(epochs, 1000.0 * ranks)
        r = f.create_group("ranks")
        r.create_dataset("hostname", data=[f"node{i}" for i in range(ranks)], dtype=strings)
        r.create_dataset("device", data=["cpu"] * ranks, dtype=strings)
        for key in ("peak_memory_bytes", "train_images", "allreduce_bytes"):
            r[key] = np.full(ranks, 1 << 20, np.int64)
        for i, key in enumerate(("allreduce_s", "data_s", "forward_s", "backward_s", "comm_wait_s", "optimizer_s",
                                 "eval_s")):
            r[key] = np.linspace(0.5, 1.0, ranks) * (i + 1)
        u = f.create_group("utilization")
        u["time_s"] = np.arange(gpu_samples, dtype=float)
        u["rank"] = np.zeros(gpu_samples, np.int32)
        u["gpu_percent"] = np.full(gpu_samples, 80.0)
        u["memory_percent"] = np.full(gpu_samples, 30.0)
        s = f.create_group("summary")
        for key, value in {"wall_time_s": 9.0, "train_time_s": 8.0, "best_test_acc": 0.8, "final_test_acc": 0.8,
                           "final_test_loss": 0.4, "images_per_s": 1000.0 * ranks}.items():
            s.attrs[key] = np.float64(value)
        for key, value in {"best_epoch": epochs, "epochs_run": epochs, "peak_memory_bytes": 1 << 20, "overfit": 0,
                           "overfit_epoch": 0, "stopped_early": 0, "optimizer_steps": 10, "skipped_steps": 0}.items():
            s.attrs[key] = np.int64(value)


def check(condition: bool, message: str) -> None:
    if not condition:
        print(f"FAIL: {message}")
        sys.exit(1)


def main() -> int:
    fusetrain, source, work = sys.argv[1], pathlib.Path(sys.argv[2]), pathlib.Path(sys.argv[3])
    shutil.rmtree(work, ignore_errors=True)
    results = work / "sweep" / "results"
    results.mkdir(parents=True)
    names = ["p000-batch_size=32-ranks=1", "p001-batch_size=64-ranks=2"]
    write_results(results / f"{names[0]}.h5", names[0], 1, 32, 3, 0)
    write_results(results / f"{names[1]}.h5", names[1], 2, 64, 3, 5)
    (work / "sweep" / "points.tsv").write_text(
        "# index\tname\tranks\tconfig\toutput_dir\toverrides...\n"
        f"0\t{names[0]}\t1\tconfig.yaml\t{results}\tdata.batch_size=32\n"
        f"1\t{names[1]}\t2\tconfig.yaml\t{results}\tdata.batch_size=64\n"
        f"2\tp002-batch_size=128-ranks=2\t2\tconfig.yaml\t{results}\tdata.batch_size=128\n")

    tools = source / "tools" / "report"
    subprocess.run([sys.executable, str(tools / "summary.py"), "--fusetrain", fusetrain, str(work / "sweep")],
                   check=True)
    report = work / "sweep" / "report"
    expected = ["sweep-curves.png", "sweep-time.png", f"{names[1]}-utilization.png"]
    expected += [f"{n}-{kind}.png" for n in names for kind in ("curves", "time")]
    for png in expected:
        check((report / png).is_file() and (report / png).read_bytes()[:4] == b"\x89PNG", f"{png} missing")
    check(not (report / f"{names[0]}-utilization.png").exists(), "utilization plotted without samples")
    for page in ("summary.md", "summary.html"):
        text = (report / page).read_text()
        for name in names:
            check(name in text, f"{page} does not name {name}")
        check("p002-batch_size=128-ranks=2" in text, f"{page} does not list the missing point")
        check("data.batch_size" in text, f"{page} lacks the swept key's column")
        check("sweep-curves.png" in text, f"{page} does not show the sweep plot")
    check(f"| {names[1]} | simple_cnn | fashion-mnist | 2 | mpi | 64 |" in (report / "summary.md").read_text(),
          "the fusetrain report row is missing from summary.md")

    single = work / "single"
    subprocess.run([sys.executable, str(tools / "plots.py"), "--out", str(single), str(results / f"{names[0]}.h5")],
                   check=True)
    check(sorted(p.name for p in single.iterdir()) == [f"{names[0]}-curves.png", f"{names[0]}-time.png"],
          f"plots.py of one file wrote {sorted(p.name for p in single.iterdir())}")
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
