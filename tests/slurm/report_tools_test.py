# The report tools against the writer's own field table (`fusetrain report --fields`): results.py must
# declare the same fields, and plots.py and summary.py must make their pages (and plots.py the heat map of an
# evaluation file) from files written in it.
"""Usage: python report_tools_test.py FUSETRAIN_BINARY SOURCE_DIR WORK_DIR"""
import json
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


def fields_listing(fusetrain: str) -> dict:
    done = subprocess.run([fusetrain, "report", "--fields"], capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


def write_results(listing: dict, path: pathlib.Path, name: str, ranks: int, batch: int, epochs: int,
                  gpu_samples: int, skip: str = "") -> None:
    """A results file with every field of the writer's own listing (so it has the writer's layout), values
    from `values` below or else a filler of the stored type; `skip` ("group/name") leaves one field out."""
    e = np.arange(1, epochs + 1)
    rows = {"/epochs": epochs, "/ranks": ranks, "/rank_epochs": ranks * epochs, "/segments": 1,
            "/utilization": gpu_samples,
            "/model": 3}
    values = {
        "/name": name, "/model": "simple_cnn", "/dataset": "fashion-mnist", "/precision": "fp32", "/batch_size": batch,
        "/config": f"model:\n  name: simple_cnn\ndata:\n  batch_size: {batch}\noptimizer:\n  name: sgd\n"
                   f"train:\n  accumulation_steps: 1\n",
        "/provenance/backend": "mpi", "/provenance/world_size": ranks, "/provenance/node_count": 1,
        "/epochs/epoch": e, "/epochs/evaluated": np.ones(epochs), "/epochs/train_loss": 1.0 / e,
        "/epochs/train_acc": 0.5 + 0.4 * (1 - 1.0 / e), "/epochs/test_loss": 1.1 / e,
        "/epochs/test_acc": 0.45 + 0.4 * (1 - 1.0 / e), "/epochs/lr": np.full(epochs, 0.05),
        "/epochs/epoch_time_s": np.full(epochs, 2.0), "/epochs/images_per_s": np.full(epochs, 1000.0 * ranks),
        "/ranks/hostname": [f"node{i}" for i in range(ranks)], "/ranks/device": ["Test GPU"] * ranks,
        "/ranks/local_rank": np.arange(ranks),
        "/ranks/train_loss": 0.25 + 0.125 * np.arange(ranks), "/ranks/train_acc": 0.75 + 0.125 * np.arange(ranks),
        "/rank_epochs/rank": np.tile(np.arange(ranks), epochs), "/rank_epochs/epoch": np.repeat(e, ranks),
        "/utilization/time_s": np.arange(gpu_samples, dtype=float), "/utilization/gpu_percent": np.full(gpu_samples, 80.0),
        "/utilization/memory_percent": np.full(gpu_samples, 30.0),
        "/model/name": ["conv1", "max_pool2d", "fc"], "/model/output_shape": ["32x28x28", "32x14x14", "10"],
        "/model/parameters": [320, 0, 62730],
        "/segments/segment": [1], "/segments/world_size": [ranks], "/segments/per_rank_batch": [batch],
        "/segments/accumulation": [1], "/segments/global_batch": [batch * ranks], "/segments/start_epoch": [1],
        "/summary/best_test_acc": 0.8, "/summary/final_test_acc": 0.8, "/summary/best_epoch": epochs,
        "/summary/epochs_run": epochs, "/summary/overfit": 0, "/summary/overfit_epoch": 0,
    }
    numpy_type = {"int32": np.int32, "int64": np.int64, "float64": np.float64}
    strings = h5py.string_dtype()
    with h5py.File(path, "w") as f:
        f.attrs.create("format", "fusetrain-results", dtype=strings)
        f.attrs["format_version"] = np.int64(listing["format_version"])
        for field in listing["fields"]:
            group, key, stored = field["group"], field["name"], field["stored"]
            full = f"{group.rstrip('/')}/{key}"
            if full == skip or group == "/evaluation":  # evaluation files: write_evaluation below
                continue
            where = f.require_group(group)
            if field["layout"] == "columns":
                n = rows[group]
                value = values.get(full, [f"test-{key}"] * n if stored == "string" else np.linspace(0.5, 1.0, n))
                if stored == "string":
                    where.create_dataset(key, data=list(value), dtype=strings)
                else:
                    where[key] = np.asarray(value).astype(numpy_type[stored])
            elif field["layout"] == "text_dataset":
                where.create_dataset(key, data=[values.get(full, f"test-{key}")], dtype=strings)
            elif stored == "string":
                where.attrs.create(key, values.get(full, f"test-{key}"), dtype=strings)
            else:
                where.attrs[key] = numpy_type[stored](values.get(full, 1))


def write_evaluation(listing: dict, path: pathlib.Path, classes: list[str]) -> None:
    """An evaluation file with every /evaluation field of the writer's listing (but the logits)."""
    k = len(classes)
    confusion = np.arange(k * k, dtype=np.int64).reshape(k, k) % 4 + 10 * np.eye(k, dtype=np.int64)
    values = {"class_names": classes, "confusion": confusion, "split": "test", "images": int(confusion.sum()),
              "top1": float(np.trace(confusion) / confusion.sum())}
    numpy_type = {"int32": np.int32, "int64": np.int64, "float64": np.float64, "float32": np.float32}
    strings = h5py.string_dtype()
    with h5py.File(path, "w") as f:
        f.attrs.create("format", "fusetrain-evaluation", dtype=strings)
        f.attrs["format_version"] = np.int64(1)
        group = f.require_group("evaluation")
        for field in (x for x in listing["fields"] if x["group"] == "/evaluation"):
            key, stored, layout = field["name"], field["stored"], field["layout"]
            if key in ("logits", "labels"):
                continue
            if layout == "columns":
                value = values.get(key, np.linspace(0.5, 1.0, k))
                if stored == "string":
                    group.create_dataset(key, data=list(value), dtype=strings)
                else:
                    group[key] = np.asarray(value).astype(numpy_type[stored])
            elif layout == "array":
                group[key] = np.asarray(values[key]).astype(numpy_type[stored])
            elif stored == "string":
                group.attrs.create(key, values.get(key, f"test-{key}"), dtype=strings)
            else:
                group.attrs[key] = numpy_type[stored](values.get(key, 1))


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
    tools = source / "tools" / "report"
    sys.path.insert(0, str(tools))
    import results as reader  # noqa: E402  (tools/report/results.py)

    listing = fields_listing(fusetrain)
    problems = reader.check_fields(listing)
    check(not problems, "tools/report/results.py disagrees with `fusetrain report --fields`:\n  " + "\n  ".join(problems))
    altered = json.loads(json.dumps(listing))
    altered["fields"] = [f for f in altered["fields"] if f["name"] != "train_acc" or f["group"] != "/ranks"]
    check(reader.check_fields(altered) == ["/ranks/train_acc: read here but not written"],
          f"check_fields misses a dropped field: {reader.check_fields(altered)}")

    write_results(listing, results / f"{names[0]}.h5", names[0], 1, 32, 3, 0)
    write_results(listing, results / f"{names[1]}.h5", names[1], 2, 64, 3, 5)
    broken = work / "broken.h5"
    write_results(listing, broken, "broken", 2, 64, 3, 5, skip="/ranks/train_loss")
    done = subprocess.run([fusetrain, "report", str(broken)], capture_output=True, text=True)
    check(done.returncode == 1 and f"{broken}: /ranks/train_loss: missing" in done.stderr,
          f"fusetrain report on a file without /ranks/train_loss: {done.returncode} {done.stderr}")
    # A mistaken option: usage status 2 and one line naming the command and the option.
    done = subprocess.run([fusetrain, "report", "--no-such-option", str(broken)], capture_output=True, text=True)
    check(done.returncode == 2 and done.stderr.startswith("fusetrain report: ") and "--no-such-option" in done.stderr,
          f"fusetrain report --no-such-option: {done.returncode} {done.stderr!r}")
    try:
        reader.read_run(broken)
        check(False, "read_run accepted a file without /ranks/train_loss")
    except ValueError as e:
        check("/ranks/train_loss: missing" in str(e) and str(broken) in str(e), f"read_run's error: {e}")
    (work / "sweep" / "points.tsv").write_text(
        "# index\tname\tranks\tconfig\toutput_dir\toverrides...\n"
        f"0\t{names[0]}\t1\tconfig.yaml\t{results}\tdata.batch_size=32\n"
        f"1\t{names[1]}\t2\tconfig.yaml\t{results}\tdata.batch_size=64\n"
        f"2\tp002-batch_size=128-ranks=2\t2\tconfig.yaml\t{results}\tdata.batch_size=128\n")

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
    md = (report / "summary.md").read_text()
    check(f"| {names[1]} | simple_cnn | fashion-mnist | 2 | mpi | 64 (global 128) |" in md,
          "the fusetrain report row is missing from summary.md")
    check("| train_acc_% |" in md and "| gpu_util_% |" in md and "| Test GPU |" in md, "new report columns missing")
    check(f"| {names[1]} | 1 | node1 | Test GPU |" in md and "| 0.3750 | 87.50 |" in md,
          "per-rank rows (rank 1's own train loss and accuracy) missing from summary.md")
    check(md.count("| conv1 | 32x28x28 | 320 |") == 1 and "| total |  | 63050 |" in md,
          "the model summary (once for the two runs of one model) is missing from summary.md")
    html_text = (report / "summary.html").read_text()
    check("<h2>Per rank</h2>" in html_text and "<td>node1</td>" in html_text and "<h2>Models</h2>" in html_text,
          "summary.html lacks the per-rank or model table")

    single = work / "single"
    subprocess.run([sys.executable, str(tools / "plots.py"), "--out", str(single), str(results / f"{names[0]}.h5")],
                   check=True)
    check(sorted(p.name for p in single.iterdir()) == [f"{names[0]}-curves.png", f"{names[0]}-time.png"],
          f"plots.py of one file wrote {sorted(p.name for p in single.iterdir())}")

    evaluation = work / "model-eval-test.h5"
    write_evaluation(listing, evaluation, ["T-shirt/top", "Trouser", "Pullover", "Dress"])
    read = reader.read_evaluation(evaluation)
    check(read.confusion.shape == (4, 4) and read.classes["class_names"][0] == "T-shirt/top" and read.logits is None,
          f"read_evaluation: {read}")
    heat = work / "heat" / "matrix.png"
    subprocess.run([sys.executable, str(tools / "plots.py"), "--confusion", str(evaluation), "--out", str(heat)],
                   check=True)
    check(heat.read_bytes()[:4] == b"\x89PNG", "plots.py --confusion wrote no PNG")
    done = subprocess.run([sys.executable, str(tools / "plots.py"), "--confusion", str(results / f"{names[0]}.h5")],
                          capture_output=True, text=True)
    check(done.returncode == 1 and "not a fusetrain evaluation file" in done.stderr,
          f"plots.py --confusion on a results file: {done.returncode} {done.stderr}")
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
