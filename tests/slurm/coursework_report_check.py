# Checks the coursework report of a smoke run: every question's section is there with its tables (rows
# filled, no empty cells) and figures (non-empty PNGs), numbers match the results files, and the parts a
# CPU host cannot run say why. Usage: coursework_report_check.py OUT SOURCE_DIR
import json
import pathlib
import re
import sys

import yaml

out, source = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
sys.path.insert(0, str(source / "tools" / "report"))
from results import read_run  # noqa: E402

report = out / "report"
contents = json.loads((report / "contents.json").read_text())
markdown = (report / "coursework.md").read_text()
page = (report / "coursework.html").read_text()
failures = []


def check(ok, message):
    if not ok:
        failures.append(message)


sections = {s["title"].split(":")[0]: s for s in contents["sections"]}
expected = {  # section -> (tables at least, figures at least)
    "Environment": (1, 0), "Q1a": (2, 2), "Q1b": (2, 2), "Q1c": (1, 1), "Q2a": (1, 1), "Q2b": (1, 1),
    "Q2c": (2, 1), "Q2d": (2, 0), "Batch size 16 / 32 / 64 / 128 on one and two ranks": (1, 1),
    "Gradient accumulation at a fixed effective batch": (1, 0),
    "Optimizers": (1, 1), "The last, smaller batch": (2, 0), "Launchers": (1, 0), "CUDA kernels": (2, 0)}
for name, (tables, figures) in expected.items():
    s = sections.get(name)
    check(s is not None, f"section {name} missing")
    if s is None:
        continue
    check(len(s["tables"]) >= tables, f"{name}: {len(s['tables'])} tables, expected {tables}")
    check(len(s["figures"]) >= figures, f"{name}: {len(s['figures'])} figures, expected {figures}")
    for t in s["tables"]:
        check(t["rows"] > 0 and t["empty_cells"] == 0, f"{name}: table {t['name']} is empty or has empty cells")
    for f in s["figures"]:
        check((report / f).stat().st_size > 1000, f"{name}: figure {f} missing or empty")
        check(f in markdown and f in page, f"{name}: figure {f} not shown on both pages")
check(page.count("<table>") == sum(len(s["tables"]) for s in contents["sections"]), "HTML tables differ")

# Filled from the runs: the Q1a row's numbers are the results file's, and the epoch log is there.
q1a = read_run(out / "results" / "q1a_one_gpu.h5")
check("| q1a_one_gpu | 1 | cpu" in markdown, "Q1a row missing")
check(f"{100 * q1a.summary['final_test_acc']:.2f} |" in markdown, "Q1a test accuracy not in the report")
check("Epoch [2/2], Train Loss: " in markdown, "per-epoch log lines missing")
check("local 32 (global 64)" in markdown, "Q1b batch not shown as local (global)")
# One naming and one unit throughout: named columns, the layer table, the global batch with accumulation.
for needle, what in (("| layer | output shape | parameters |", "network structure table"),
                     ("| optimizer | lr | scheduler |", "optimizer and scheduler columns named"),
                     ("| own train loss | own train acc (%) |", "per-rank columns named, accuracy in percent"),
                     ("| crop_padding | flip |", "Q2c crop padding beside flip"),
                     ("| run | ranks | device |", "ranks column")):
    check(needle in markdown, f"{what}: '{needle}' missing")
check("local 64 (global 256, 2 accumulation steps)" in markdown, "accumulation missing from the global batch")

# Change columns of every one-vs-two pair, from the results files' own times.
q1b = read_run(out / "results" / "q1b_two_gpus.h5")
speedup = q1a.summary["train_time_s"] / q1b.summary["train_time_s"]
check(f"| Q1a -> Q1b | 1 -> 2 | {speedup:.2f}x | {50 * speedup:.1f} |" in markdown, "Q1c change row wrong or missing")
for b in (16, 32, 64, 128):
    check(f"| batch {b} | 1 -> 2 | " in markdown, f"batch-size change row for batch {b} missing")
for stem, points in (("batch_size", 8), ("q2c_regularization", 4), ("grad_accumulation", 4), ("optimizers", 4)):
    done = len(list((out / "sweeps" / stem / "results").glob("*.h5")))
    check(done == points, f"{stem}: {done} results files, expected {points}")

# What a CPU host cannot run is named with the reason.
reasons = {"Q2b": "fp16 needs a CUDA device: not run on this host",
           "Q2d": "NCCL needs one GPU per rank (2 ranks, 0 GPUs here): not run on this host",
           "Q1a": "GPU utilisation is sampled through NVML on GPUs",
           "CUDA kernels": "the CUDA rows need a GPU: not run on this host"}
for name, reason in reasons.items():
    absent = " ".join(sections.get(name, {}).get("absent", []))
    check(reason in absent, f"{name}: does not say '{reason}' (says: {absent})")
check("GPU utilisation is sampled through NVML" in " ".join(sections.get("Q2d", {}).get("absent", [])),
      "Q2d: the backend runs neither chart utilisation nor say why not")
check(markdown.count("| not run |") >= 4, "skipped points have no rows")
mpirun_run = out / "launchers" / "results" / "launch-mpirun.h5"
if mpirun_run.exists():  # memory per rank in the launcher table, from the run's own peak
    peak = max(read_run(mpirun_run).ranks["peak_memory_bytes"]) / 1024.0 ** 2
    check(any(line.startswith("| mpirun | 2 |") and f"| {peak:.0f} |" in line for line in markdown.splitlines()),
          f"launcher row for mpirun missing or without its memory ({peak:.0f} MiB)")
else:
    check(False, "launcher run under mpirun has no results file")
srun_rows = [line for line in markdown.splitlines() if line.startswith("| srun | 2 |")]
check(len(srun_rows) == 1, "launcher row for srun missing")
if srun_rows and "not run" in srun_rows[0]:
    check(any(a.startswith("srun: not run") for a in sections["Launchers"]["absent"]), "srun row without its reason")

# The fused conv+ReLU study (2 and 10 layers x fused kernel, cuDNN, cuDNN disabled, CPU): one table of 8 rows,
# the CPU rows filled from their results files, the GPU rows "not run" with the reason; and the RGB-to-gray
# table names its images and times the Python loop on them.
def markdown_section(title):
    part = markdown.split(f"\n## {title}", 1)
    return part[1].split("\n## ", 1)[0] if len(part) == 2 else ""


conv = sections.get("Fused convolution + ReLU", {"tables": [], "absent": []})
check([t["rows"] for t in conv["tables"]] == [8], f"conv+ReLU study: tables {conv['tables']}, expected one of 8 rows")
conv_rows = [[c.strip() for c in line.split("|")[1:-1]]
             for line in markdown_section("Fused convolution + ReLU").splitlines() if re.match(r"\| (2|10) \| ", line)]
check([r[:2] for r in conv_rows] == [[n, impl] for n in ("2", "10")
                                     for impl in ("fused kernel", "cuDNN", "cuDNN disabled", "CPU (ATen)")],
      f"conv+ReLU study: rows {[r[:2] for r in conv_rows]}")
for layers, impl, dev, forward, backward, seconds, acc in (r for r in conv_rows if len(r) == 7):
    if impl == "CPU (ATen)":
        results = out / "sweeps" / f"conv_relu_{layers}_layers" / "results" / "p003-cpu.h5"
        if not results.exists() or "not run" in (forward, acc):
            check(False, f"conv+ReLU {layers} layers: the CPU point did not run")
            continue
        run = read_run(results)
        check(dev.startswith("cpu") and float(forward) > 0 and float(backward) > 0 and float(seconds) > 0,
              f"conv+ReLU {layers} layers CPU row not filled: {dev} {forward} {backward} {seconds}")
        check(acc == f"{100 * run.summary['final_test_acc']:.2f}", f"conv+ReLU {layers} layers CPU accuracy {acc}")
    else:
        check([dev, forward, backward, seconds, acc] == ["cuda"] + ["not run"] * 4,
              f"conv+ReLU {layers} layers {impl} row should be not run on cuda")
        check(any(a.startswith(f"{layers} layers, {impl}: ") and a.endswith("needs a CUDA device: not run on this host")
                  for a in conv["absent"]), f"conv+ReLU {layers} layers {impl}: no reason given")
gray = markdown_section("CUDA kernels")
check(f"the same 4 images of {out}/data (train split), resized to 96x96" in gray,
      "RGB to gray: the section does not name its data and image count")
python_row = re.search(r"^\| Python loop \(interpreted, once\) \| ([0-9.]+) \|", gray, re.M)
check(python_row is not None and float(python_row[1]) > 0, "RGB to gray: no Python loop row with a time")

# Q2b on a CPU host: bf16 autocasts on the CPU (its row is filled from the run), fp16 is named as GPU-only; the
# environment names the CPU's bf16 unit.
bf16_runs = [r for r in map(read_run, sorted((out / "sweeps" / "q2b_precision" / "results").glob("*.h5")))
             if r.precision == "bf16"]
check(len(bf16_runs) == 1, f"Q2b: {len(bf16_runs)} bf16 results files, expected 1 (bf16 runs on the CPU)")
for r in bf16_runs:
    check(any(line.startswith("| bf16 |") and "| cpu" in line and f"| {100 * r.summary['final_test_acc']:.2f} |" in line
              for line in markdown.splitlines()), "Q2b: the bf16 row is not the CPU run's")
check("| cpu bf16 unit |" in markdown, "environment: the CPU's bf16 unit is not named")

# The largest batch that fits with its two profiler traces, the first report's recipe, the overfitting study.
limit = sections.get("The largest batch that fits, and a profiler window", {})
recipe = sections.get("The first report's recipe", {})
for name, sec in (("batch limit", limit), ("recipe", recipe)):
    check(bool(sec), f"{name}: section missing")
    for t in sec.get("tables", []):
        check(t["rows"] > 0 and t["empty_cells"] == 0, f"{name}: table {t['name']} is empty or has empty cells")
    for f in sec.get("figures", []):
        check((report / f).stat().st_size > 1000 and f in markdown and f in page, f"{name}: figure {f} missing")
limit_tables = {t["name"]: t for t in limit.get("tables", [])}
check(limit_tables.get("batch limit", {}).get("rows", 0) >= 2, "batch limit: fewer than 2 batch sizes measured")
verdict = re.search(r"^largest batch that fits: (\d+); stopped by (out of memory|the ceiling)", markdown, re.M)
check(verdict is not None, "batch limit: no 'largest batch that fits: N; stopped by ...' line")
limit_md = out / "batch_size_limit.md"
measured = re.findall(r"^\| (\d+) \| [0-9.]+ \|", limit_md.read_text() if limit_md.exists() else "", re.M)
check(len(measured) >= 2, f"batch limit: {limit_md} missing or with fewer than 2 measured batch sizes")
if verdict and measured:
    check(verdict.group(1) == measured[-1], f"batch limit: verdict {verdict.group(1)}, last batch measured {measured[-1]}")
    for b in sorted({measured[0], measured[-1]}, key=int):
        trace, link = out / "profiles" / f"batch-{b}.json", f"../profiles/batch-{b}.json"
        events = json.loads(trace.read_text()).get("traceEvents", []) if trace.exists() else []
        check(len(events) > 0, f"batch limit: trace {trace} missing, not JSON or without events")
        check(f"]({link})" in markdown and f'href="{link}"' in page and link in limit.get("links", []),
              f"batch limit: trace {link} not linked from both pages")
recipe_runs = [read_run(p) for p in sorted((out / "sweeps" / "adamw_recipe" / "results").glob("*.h5"))]
check(sorted(int(r.provenance["world_size"]) for r in recipe_runs) == [1, 2], "recipe: expected runs on 1 and 2 ranks")
check({t["name"]: t["rows"] for t in recipe.get("tables", [])}.get("recipe") == 2, "recipe: table without 2 runs")
for r in recipe_runs:
    c = yaml.safe_load(r.config)
    check((c["optimizer"]["name"], c["optimizer"]["weight_decay"], c["scheduler"]["name"], c["optimizer"]["lr"])
          == ("adamw", 0.05, "onecycle", 0.001), f"recipe: {r.name} is not AdamW 5e-2 + one-cycle to 1e-3")
    check(c["data"]["augment"]["brightness"] > 0 and c["data"]["augment"]["rotation_degrees"] > 0,
          f"recipe: {r.name} lacks colour jitter or rotation")
check("| optimizer | adamw (weight decay 0.05) |" in markdown and "| schedule | onecycle (max lr 0.001," in markdown,
      "recipe: settings not shown from the results files")
if len(recipe_runs) == 2:
    one, two = sorted(recipe_runs, key=lambda r: int(r.provenance["world_size"]))
    ratio = one.summary["train_time_s"] / two.summary["train_time_s"]
    check(f"| recipe | 1 -> 2 | {ratio:.2f}x |" in markdown, "recipe: change row wrong or missing")
study = read_run(out / "results" / "q2a_overfitting.h5")
check(bool(study.summary["overfit"]) and study.summary["overfit_epoch"] > 0, "Q2a: the smoke study did not overfit")
check(f"| overfits: test loss rose while train loss fell from epoch {study.summary['overfit_epoch']} " in markdown,
      "Q2a: the study's verdict does not start with 'overfits' and name the results file's overfit_epoch")

# Per-rank accuracy: each rank's own loss and accuracy on its slice of the test split, its log lines, and the
# per-rank tables of the batch-size sweep and of the backends (one row per rank of every finished run).
check("| own train loss | own train acc (%) | own test loss | own test acc (%) |" in markdown,
      "per-rank own test columns missing")
check("Rank 1, Epoch [2/2], Train Loss: " in markdown and "All ranks, Epoch [2/2], Train Loss: " in markdown,
      "per-rank epoch log lines missing")
check("Epoch [2/2], Train Loss: " in markdown and "%, Test Loss: " in markdown, "epoch log lacks train acc / test loss")
q1b_acc = f"{100 * float(q1b.ranks['test_acc'][1]):.2f}"
check(any(line.startswith("| 1 | ") and line.endswith(f"| {q1b_acc} |") for line in markdown.splitlines()),
      f"rank 1's own test accuracy of q1b_two_gpus.h5 ({q1b_acc}) not in its per-rank row")
for stem, section, table in (("batch_size", "Batch size 16 / 32 / 64 / 128 on one and two ranks", "batch size per rank"),
                             ("q2d_backends", "Q2d", "backends per rank")):
    rank_count = sum(int(read_run(p).provenance["world_size"]) for p in (out / "sweeps" / stem / "results").glob("*.h5"))
    found = [t for t in sections.get(section, {}).get("tables", []) if t["name"] == table]
    check(len(found) == 1 and found[0]["rows"] == rank_count and "own test acc (%)" in found[0]["columns"],
          f"{section}: table '{table}' missing or not one row per rank ({rank_count}): {found}")

if failures:
    print("FAIL:\n  " + "\n  ".join(failures))
    sys.exit(1)
print(f"report complete: {len(contents['sections'])} sections, "
      f"{sum(len(s['tables']) for s in contents['sections'])} tables, "
      f"{sum(len(s['figures']) for s in contents['sections'])} figures")
