# Checks the coursework report of a smoke run: every section with its tables (rows filled, no empty cells) and
# figures, numbers that match the results files and recompute by hand, words true on the host. Usage: OUT SOURCE_DIR
"""Each failure names the point of the report it breaks ([1] memory named, [2] digits, ... [12] the HTML page)."""
import json
import math
import pathlib
import re
import sys

import yaml

out, source = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
sys.path.insert(0, str(source / "tools" / "report"))
from results import read_run  # noqa: E402

MIB = 1024.0 ** 2
report = out / "report"
contents = json.loads((report / "contents.json").read_text())
markdown = (report / "coursework.md").read_text()
page = (report / "coursework.html").read_text()
env = dict(line.split("\t", 1) for line in (out / "environment.tsv").read_text().splitlines())
failures = []


def check(ok, message):
    if not ok:
        failures.append(message)


def markdown_tables():
    """Every table of the markdown page as (header, rows of cells), in page order."""
    tables, lines = [], markdown.splitlines() + [""]
    block = []
    for line in lines:
        if line.startswith("|"):
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if not all(set(c) <= set("-: ") for c in cells):
                block.append(cells)
        elif block:
            tables.append(block)
            block = []
    return tables


# Each section's tables with their cells: from contents.json, or (a report that does not keep them) from the
# markdown page's tables in the same order.
md = markdown_tables()
index = 0
for s in contents["sections"]:
    for t in s["tables"]:
        if "cells" not in t and index < len(md):
            t["cells"] = md[index][1:]
        index += 1
sections = {s["title"].split(":")[0]: s for s in contents["sections"]}
titles = [s["title"] for s in contents["sections"]]


def section(prefix):
    return next((s for s in contents["sections"] if s["title"].startswith(prefix)), {"tables": [], "figures": [],
                                                                                    "absent": [], "title": ""})


def table(sec, name):
    return next((t for t in sec["tables"] if t["name"] == name), None)


def column(t, header):
    return [row[t["columns"].index(header)] for row in t.get("cells", [])] if header in t["columns"] else []


def markdown_section(title_prefix):
    part = re.split(r"\n## " + re.escape(title_prefix), markdown, maxsplit=1)
    return part[1].split("\n## ", 1)[0] if len(part) == 2 else ""


def results_files():
    """Every training run of the smoke (results, sweeps, launchers, the BatchNorm runs)."""
    return (sorted((out / "results").glob("*.h5")) + sorted((out / "sweeps").glob("*/results/*.h5"))
            + sorted((out / "launchers" / "results").glob("*.h5"))
            + sorted((out / "last_batch_bn" / "results").glob("*.h5")))


def steps_per_epoch(run):
    return int(run.summary["optimizer_steps"]) / max(int(run.summary["epochs_run"]), 1)


def sig3(x):
    return f"{x:.{max(2 - math.floor(math.log10(abs(x))), 0)}f}" if x else "0.00"


def significant_digits(cell):
    """Digits after the leading zeros: 0.614 and 460 have 3, 0.4 has 1."""
    return len(re.sub(r"[^0-9]", "", cell).lstrip("0"))


# --- Every section, table and figure is there and filled -----------------------------------------------------
expected = {  # title prefix -> (tables at least, figures at least)
    "What was run": (1, 0), "Environment": (1, 0), "Q1a": (3, 2), "Q1b": (2, 2), "Q1c": (2, 1), "Q2a": (1, 1),
    "Q2b": (1, 1), "Q2c": (2, 1), "Q2d": (3, 0), "Batch size 16 / 32 / 64 / 128 on one and two ranks": (3, 1),
    "Gradient accumulation at a fixed effective batch": (1, 0), "Optimizers": (1, 1), "The last, smaller batch": (3, 0),
    "Launchers": (1, 0), "Fused convolution + ReLU": (1, 0), "The largest batch that fits": (2, 0),
    "The first report's recipe": (4, 1)}
for name, (tables, figures) in expected.items():
    s = section(name)
    check(s["title"], f"section {name} missing")
    check(len(s["tables"]) >= tables, f"{name}: {len(s['tables'])} tables, expected {tables}")
    check(len(s["figures"]) >= figures, f"{name}: {len(s['figures'])} figures, expected {figures}")
for s in contents["sections"]:
    for t in s["tables"]:
        check(t["rows"] > 0 and t["empty_cells"] == 0, f"{s['title']}: table {t['name']} is empty or has empty cells")
    for f in s["figures"]:
        check((report / f).exists() and (report / f).stat().st_size > 1000, f"{s['title']}: figure {f} missing")
        check(f in markdown and f in page, f"{s['title']}: figure {f} not shown on both pages")
check(page.count("<table>") == sum(len(s["tables"]) for s in contents["sections"]), "HTML tables differ")
q1a_path = next(iter(sorted((out / "results").glob("q1a_*.h5"))), None)
q1b_path = next(iter(sorted((out / "results").glob("q1b_*.h5"))), None)
q1a, q1b = read_run(q1a_path), read_run(q1b_path)
check(f"| {q1a.name} | 1 | cpu" in markdown, "Q1a row missing")
check(f"{100 * q1a.summary['final_test_acc']:.2f} |" in markdown, "Q1a test accuracy not in the report")
check("Epoch [2/2], Train Loss: " in markdown and "%, Test Loss: " in markdown, "per-epoch log lines missing")
check("Rank 1, Epoch [2/2], Train Loss: " in markdown and "All ranks, Epoch [2/2], Train Loss: " in markdown,
      "per-rank epoch log lines missing")
check("local 32 (global 64)" in markdown, "Q1b batch not shown as local (global)")
check("local 64 (global 256, 2 accumulation steps)" in markdown, "accumulation missing from the global batch")
for needle, what in (("| layer | output shape | parameters |", "network structure table"),
                     ("| optimizer | lr | scheduler |", "optimizer and scheduler columns named"),
                     ("| own train loss | own train acc (%) | own test loss | own test acc (%) |", "own columns"),
                     ("| crop_padding | flip |", "Q2c crop padding beside flip"),
                     ("| run | ranks | device |", "ranks column"), ("| cpu bf16 unit |", "the CPU's bf16 unit")):
    check(needle in markdown, f"{what}: '{needle}' missing")
q1b_acc = f"{100 * float(q1b.ranks['test_acc'][1]):.2f}"
check(any(line.startswith("| 1 | ") and line.endswith(f"| {q1b_acc} |") for line in markdown.splitlines()),
      f"rank 1's own test accuracy of {q1b.name} ({q1b_acc}) not in its per-rank row")
for stem, points in (("batch_size", 8), ("q2c_regularization", 4), ("grad_accumulation", 4), ("optimizers", 4)):
    done = len(list((out / "sweeps" / stem / "results").glob("*.h5")))
    check(done == points, f"{stem}: {done} results files, expected {points}")
for stem, prefix, name in (("batch_size", "Batch size", "batch size per rank"), ("q2d_backends", "Q2d", "backends per rank")):
    rank_count = sum(int(read_run(p).provenance["world_size"]) for p in (out / "sweeps" / stem / "results").glob("*.h5"))
    t = table(section(prefix), name)
    check(t is not None and t["rows"] == rank_count and "own test acc (%)" in t["columns"],
          f"{prefix}: table '{name}' missing or not one row per rank ({rank_count})")

# What a CPU host cannot run is named with the reason.
for prefix, reason in (("Q2b", "fp16 needs a CUDA device: not run on this host"),
                       ("Q2d", "NCCL needs one GPU per rank (2 ranks, 0 GPUs here): not run on this host"),
                       ("Q1a", "GPU utilisation is sampled through NVML on GPUs"),
                       ("Q2d", "GPU utilisation is sampled through NVML on GPUs"),
                       ("Kernels on the CPU", "the CUDA rows need a GPU: not run on this host")):
    check(reason in " ".join(section(prefix)["absent"]), f"{prefix}: does not say '{reason}'")
check(markdown.count("| not run |") >= 4, "skipped points have no rows")
srun_rows = [line for line in markdown.splitlines() if line.startswith("| srun |")]
check(len(srun_rows) == 1, "launcher row for srun missing")
if srun_rows and "not run" in srun_rows[0]:
    check(any(a.startswith("srun: not run") for a in section("Launchers")["absent"]), "srun row without its reason")
bf16 = [r for r in map(read_run, sorted((out / "sweeps" / "q2b_precision" / "results").glob("*.h5"))) if r.precision == "bf16"]
check(len(bf16) == 1 and any(line.startswith("| bf16 |") and "| cpu" in line and
                             f"| {100 * bf16[0].summary['final_test_acc']:.2f} |" in line for line in markdown.splitlines()),
      "Q2b: the bf16 row is not the CPU run's")

# The conv+ReLU study: one table of 8 rows, CPU rows from their results files, GPU rows "not run" with the reason.
conv = section("Fused convolution + ReLU")
conv_table = table(conv, "conv+ReLU study")
conv_rows = conv_table["cells"] if conv_table else []
check([r[:2] for r in conv_rows] == [[n, impl] for n in ("2", "10")
                                     for impl in ("fused kernel", "cuDNN", "cuDNN disabled", "CPU (ATen)")],
      f"conv+ReLU study: rows {[r[:2] for r in conv_rows]}")
for layers, impl, dev, forward, backward, seconds, acc in (r for r in conv_rows if len(r) == 7):
    if impl == "CPU (ATen)":
        results = out / "sweeps" / f"conv_relu_{layers}_layers" / "results" / "p003-cpu.h5"
        ok = results.exists() and "not run" not in (forward, acc)
        check(ok and float(forward) > 0 and float(backward) > 0 and float(seconds) > 0 and
              acc == f"{100 * read_run(results).summary['final_test_acc']:.2f}", f"conv+ReLU {layers} layers CPU row")
    else:
        check([dev, forward, backward, seconds, acc] == ["cuda"] + ["not run"] * 4, f"conv+ReLU {layers} {impl} row")
        check(any(a.startswith(f"{layers} layers, {impl}: ") and a.endswith("needs a CUDA device: not run on this host")
                  for a in conv["absent"]), f"conv+ReLU {layers} layers {impl}: no reason given")

# The largest batch with its traces, the recipe, the overfitting study.
limit = section("The largest batch that fits")
verdict = re.search(r"^largest batch that fits: (\d+); stopped by (out of memory|the ceiling)", markdown, re.M)
measured = re.findall(r"^\| (\d+) \| [0-9.]+ \|", (out / "batch_size_limit.md").read_text(), re.M)
check(verdict is not None and len(measured) >= 2 and verdict.group(1) == measured[-1], "batch limit: verdict or rows")
for b in sorted({measured[0], measured[-1]} if measured else set(), key=int):
    trace, link = out / "profiles" / f"batch-{b}.json", f"../profiles/batch-{b}.json"
    check(trace.exists() and json.loads(trace.read_text()).get("traceEvents"), f"batch limit: trace {trace} missing")
    check(f"]({link})" in markdown and f'href="{link}"' in page and link in limit.get("links", []),
          f"batch limit: trace {link} not linked from both pages")
recipe_runs = [read_run(p) for p in sorted((out / "sweeps" / "adamw_recipe" / "results").glob("*.h5"))]
check(sorted(int(r.provenance["world_size"]) for r in recipe_runs) == [1, 2], "recipe: expected runs on 1 and 2 ranks")
for r in recipe_runs:
    c = yaml.safe_load(r.config)
    check((c["optimizer"]["name"], c["optimizer"]["weight_decay"], c["scheduler"]["name"], c["optimizer"]["lr"])
          == ("adamw", 0.05, "onecycle", 0.001) and c["data"]["augment"]["rotation_degrees"] > 0, f"recipe: {r.name}")
check("| optimizer | adamw (weight decay 0.05) |" in markdown, "recipe: settings not shown from the results files")
study = read_run(out / "results" / "q2a_overfitting.h5")
check(bool(study.summary["overfit"]) and study.summary["overfit_epoch"] > 0, "Q2a: the smoke study did not overfit")
check(f"| overfits: test loss rose while train loss fell from epoch {study.summary['overfit_epoch']} " in markdown,
      "Q2a: the study's verdict does not start with 'overfits' and name the results file's overfit_epoch")

# --- [1] Memory: every header names its quantity; the CPU also shows what the training held ----------------------
NAMED = ("peak RSS", "CPU peak allocated", "CUDA peak allocated", "all-reduced")
for s in contents["sections"]:
    for t in s["tables"]:
        for c in t["columns"]:
            if "MiB" in c:
                check(any(n in c for n in NAMED), f"[1] {s['title']}: table '{t['name']}' column '{c}' does not name "
                                                  "its memory (peak RSS, CPU or CUDA peak allocated)")
for run in (q1a, q1b):
    held = float(max(run.ranks["peak_allocated_bytes"])) / MIB if "peak_allocated_bytes" in run.ranks else 0
    check(0 < held < float(max(run.ranks["peak_memory_bytes"])) / MIB,
          f"[1] {run.name}: no CPU peak allocated below its peak RSS in the results file")
    rows = [dict(zip(t["columns"], r)) for t in section("Q1c")["tables"] if "CPU peak allocated (MiB)" in t["columns"]
            for r in t["cells"] if r[0] == run.name]
    check(bool(rows) and rows[0]["CPU peak allocated (MiB)"] == sig3(held),
          f"[1] Q1c: {run.name} without its CPU peak allocated ({sig3(held)})")

# --- [2] and [3] Derived columns recompute from the printed values, accuracy change included ------------------------
time_columns = ("train time (s)", "total time (s)", "time (s)", "forward (s)", "backward (s)")
for s in contents["sections"]:
    for t in s["tables"]:
        short = [cell for c in t["columns"] if c in time_columns for cell in column(t, c)
                 if re.match(r"^[0-9.]+$", cell) and significant_digits(cell) < 3]
        check(not short, f"[2] {s['title']}: table '{t['name']}' prints {len(short)} time(s) with fewer than 3 "
                         f"significant digits, e.g. '{short[0] if short else ''}'")
change_tables = [(s["title"], t) for s in contents["sections"] for t in s["tables"] if "speed-up" in t["columns"]]
check(len(change_tables) >= 3, f"[2] {len(change_tables)} change tables, expected Q1c, batch sizes and the recipe")
for title, t in change_tables:
    check("train time (s)" in t["columns"] and "test acc change (points)" in t["columns"],
          f"[2][3] {title}: change table '{t['name']}' lacks the times it derives from or the accuracy change")
    if "train time (s)" not in t["columns"] or "test acc change (points)" not in t["columns"]:
        continue
    for row in t["cells"]:
        cell = dict(zip(t["columns"], row))
        t1, tn = map(float, cell["train time (s)"].split(" -> "))
        check(cell["speed-up"] == f"{t1 / tn:.2f}x", f"[2] {title}: {row[0]} speed-up {cell['speed-up']} is not "
                                                      f"{t1} / {tn}")
        check(cell["train time change (%)"] == f"{100 * (tn - t1) / t1:+.1f}", f"[2] {title}: {row[0]} time change")
        a1, an = map(float, cell["test acc (%)"].split(" -> "))
        check(cell["test acc change (points)"] == f"{an - a1:+.2f}", f"[3] {title}: {row[0]} accuracy change")
        memory = [c for c in t["columns"] if c.endswith("change (%)") and "peak allocated" in c]
        check(memory == ["CPU peak allocated change (%)"], f"[1] {title}: memory change is not of CPU peak allocated")
        if memory and " -> " in cell.get("CPU peak allocated (MiB)", ""):
            m1, mn = map(float, cell["CPU peak allocated (MiB)"].split(" -> "))
            check(cell[memory[0]] == f"{100 * (mn - m1) / m1:+.1f}", f"[2] {title}: {row[0]} memory change")
# The batch-size table's predicted columns (`fusetrain plan` from each one-rank run): made for every pair, the
# speed-up the efficiency printed beside it means, an efficiency no rank count exceeds.
predicted = [(title, t) for title, t in change_tables if "predicted speed-up" in t["columns"]]
check(len(predicted) == 1, f"[2] {len(predicted)} tables with a predicted speed-up, expected the batch sizes' alone")
for title, t in predicted:
    for row in t["cells"]:
        cell = dict(zip(t["columns"], row))
        check(cell["predicted speed-up"] != "-", f"[2] {title}: {row[0]} has no prediction (no OUT/plan file)")
        if cell["predicted speed-up"] == "-":
            continue
        n, efficiency = int(cell["ranks"].split(" -> ")[1]), float(cell["predicted scaling efficiency (%)"])
        check(0 < efficiency <= 100, f"[2] {title}: {row[0]} predicted efficiency {efficiency}% out of (0, 100]")
        check(cell["predicted speed-up"] == f"{n * efficiency / 100:.2f}x",
              f"[2] {title}: {row[0]} predicted speed-up {cell['predicted speed-up']} is not {n} x {efficiency}%")

# --- [4] The report opens with what was run and says smoke numbers test the pipeline ------------------------------
first = contents["sections"][0]
check(first["title"] == "What was run", f"[4] the report opens with '{first['title']}', not 'What was run'")
what = {r[0]: r[1] for r in (table(first, "what was run") or {"cells": []})["cells"]}
train_images, test_images = int(sum(q1a.ranks["train_images"])), int(sum(q1a.ranks["test_images"]))
check(what.get("images per split", "").startswith(f"{train_images} training, {test_images} test"),
      f"[4] images per split not stated as {train_images} training, {test_images} test: {what.get('images per split')}")
check(what.get("mode", "").startswith("smoke") and what.get("epochs", "").startswith("2") and
      "fashion-mnist" in what.get("data set", "") and what.get("device", "").startswith("cpu") and
      "1 and 2" in what.get("ranks", ""), f"[4] mode, data set, epochs, device or ranks not stated: {what}")
check("these numbers test the pipeline, not the network" in markdown_section("What was run"),
      "[4] the summary does not say that smoke numbers test the pipeline, not the network")

# --- [5] Every smoke point takes several steps per epoch; any that does not (or is at chance) is flagged ---------
for path in results_files():
    run = read_run(path)
    if run.name != "q2a_overfitting":  # full-batch on purpose: one step per epoch for 40 epochs
        check(steps_per_epoch(run) >= 4, f"[5] {path.relative_to(out)}: {steps_per_epoch(run):g} steps per epoch")
for s in contents["sections"]:
    for t in s["tables"]:
        if "steps per epoch" not in t["columns"] or "test acc (%)" not in t["columns"]:
            continue
        for row in t["cells"]:
            cell = dict(zip(t["columns"], row))
            if "not run" in row or not re.match(r"^[0-9.]+$", cell["steps per epoch"] + cell["test acc (%)"]):
                continue
            if float(cell["steps per epoch"]) < 4 or float(cell["test acc (%)"]) <= 15:  # chance 10% + 5 points
                check(cell["run"] in s.get("flagged", []), f"[5] {s['title']}: {cell['run']} ({cell['steps per epoch']} "
                                                           f"steps per epoch, {cell['test acc (%)']}%) is not flagged")

# --- [6] Names and headings follow the device and the launcher ----------------------------------------------------
check(env.get("gpus") == "0" and [p.stem for p in (q1a_path, q1b_path)] == ["q1a_one_cpu_process", "q1b_two_cpu_processes"],
      f"[6] Q1 runs named {[p.stem for p in (q1a_path, q1b_path)]} on a host without GPUs")
for prefix in ("Q1a", "Q1b"):
    check("CPU process" in section(prefix)["title"], f"[6] '{section(prefix)['title']}' does not say CPU processes")
check("Gloo against MPI" in section("Q2d")["title"] and "NCCL against" not in section("Q2d")["title"],
      f"[6] Q2d heading '{section('Q2d')['title']}' does not name the backends that ran")
check(not any(t.startswith("CUDA kernels") for t in titles) and any(t.startswith("Kernels on the CPU") for t in titles),
      "[6] the kernel section is headed 'CUDA kernels' over CPU rows")
launch = table(section("Launchers"), "launchers")
stands = {r[0]: r[1] for r in (launch or {"cells": []})["cells"]} if launch and "stands in for" in launch["columns"] else {}
check("mp.spawn" in stands.get("mpirun", "") and "torchrun" in stands.get("srun", ""),
      "[6] the launcher table does not say mpirun and srun stand in for mp.spawn and torchrun")
check("started by mpirun (standing in for the students' mp.spawn)" in markdown_section("Q1a"),
      "[6] Q1a does not say which launcher started it and what it stands in for")
mpirun_run = out / "launchers" / "results" / "launch-mpirun.h5"
if mpirun_run.exists() and launch:
    held = sig3(max(read_run(mpirun_run).ranks.get("peak_allocated_bytes", [0])) / MIB)
    check(any(r[0] == "mpirun" and held in r for r in launch["cells"]), f"[1] launcher row for mpirun without {held} MiB")

# --- [7] Q2a verdicts: too few epochs said so; which accuracy is higher said in words -----------------------------
check(not re.search(r"gap -?[0-9]", markdown), "[7] an accuracy gap is printed as a signed number ('gap -3.9')")
verdicts = table(section("Q2a"), "overfitting verdicts") or table(section("Q2a"), "verdicts")
runs_by_label = {"Q1a": q1a, "Q1b": q1b, "overfitting study": study}
for row in (verdicts or {"cells": []})["cells"]:
    run, text = runs_by_label.get(row[0]), row[-1]
    window = int(yaml.safe_load(run.config)["regularization"]["overfit_window"])
    evaluated = int(sum(run.epochs["evaluated"]))
    if evaluated < window + 1 and not run.summary["overfit"]:
        check(text.startswith(f"too few epochs to judge (window {window})"), f"[7] Q2a {row[0]}: '{text[:60]}...' on "
                                                                            f"{evaluated} evaluated epochs")
    check(re.search(r"points (above|below) test accuracy|end equal", text), f"[7] Q2a {row[0]}: gap without direction")
for row in (table(section("Q2c"), "regularization verdicts") or {"cells": []})["cells"]:
    check(row[1].startswith("too few epochs to judge (window 3)"), f"[7] Q2c {row[0]}: '{row[1][:50]}...'")

# --- [8] The last batch: the images each policy trained, and BatchNorm on a last batch of one image --------------
trained = table(section("The last, smaller batch"), "images each policy trained")
check(trained is not None, "[8] no table of the images each remainder policy trained")
for row in (trained or {"cells": []})["cells"]:
    run = read_run(out / "sweeps" / "last_batch" / "results" / f"{row[0]}.h5")
    images = int(round(steps_per_epoch(run) * run.batch_size))
    check(row[6] == str(images) and row[6] != row[4], f"[8] {row[0]}: trained {row[6]} per epoch, the file says {images}")
bn = table(section("The last, smaller batch"), "BatchNorm and a last batch of one image")
bn_rows = {r[0]: r for r in (bn or {"cells": []})["cells"]}
check(set(bn_rows) == {"bn-drop", "bn-pad", "bn-batch1"}, f"[8] BatchNorm table rows {sorted(bn_rows)}")
for name in ("bn-drop", "bn-pad"):
    check(bn_rows.get(name, [""])[-1] == "trained" and (out / "last_batch_bn" / "results" / f"{name}.h5").exists(),
          f"[8] {name} did not train")
check(re.search(r"Expected more than 1 value per channel|NaN", bn_rows.get("bn-batch1", [""])[-1]),
      "[8] the batch of one image under BatchNorm shows neither LibTorch's refusal nor a NaN")

# --- [9] The profiler schedule: wait 1, warm-up 1, active 3, memory on; repeat named -------------------------------
profiled = read_run(out / "profiles" / f"batch-{measured[0]}.h5") if measured else None
schedule = yaml.safe_load(profiled.config)["profile"] if profiled else {}
check((schedule.get("wait"), schedule.get("warmup"), schedule.get("active")) == (1, 1, 3),
      f"[9] profiled run's schedule {schedule}, expected wait 1, warm-up 1, active 3")
check("wait 1 step, warm-up 1 step" in markdown and "active 3 steps" in markdown and "repeat" in markdown,
      "[9] the report does not state the schedule (wait 1, warm-up 1, active 3, repeat)")
traces = table(limit, "profiler traces")
for row in (traces or {"cells": [], "columns": []})["cells"]:
    cell = dict(zip(traces["columns"], row))
    check(cell.get("training steps recorded") == "3" and int(cell.get("memory events", "0")) > 0,
          f"[9] trace at batch {row[0]}: steps {cell.get('training steps recorded')}, memory events "
          f"{cell.get('memory events')}")

# --- [10] RGB to gray: N x faster than the Python loop, on colour images --------------------------------------------
kernels = section("Kernels on the CPU") if section("Kernels on the CPU")["title"] else section("CUDA kernels")
gray = next((t for t in kernels["tables"] if t["name"].startswith("RGB to gray against the Python loop")), None)
gray_rows = (gray or {"cells": []})["cells"]
python_ms = next((float(r[1]) for r in gray_rows if r[0].startswith("Python loop")), 0)
check(python_ms > 0, "[10] no RGB-to-gray table against the Python loop")
for name, ms, against in (r for r in gray_rows if not r[0].startswith("Python") and re.match(r"^[0-9.]+$", r[1])):
    check(against == f"{sig3(python_ms / float(ms))}x faster", f"[10] {name}: '{against}', expected "
                                                               f"{sig3(python_ms / float(ms))}x faster")
check(not re.search(r"\| 0\.0+[0-9]+x \|", markdown), "[10] a speed-up printed as a fraction (0.000477x)")
gray_folder = env.get("gray data", "").split(" (")[0]
if (source.parent / "shared" / "data" / "cifar10-jpg.tar.xz").exists():
    check(gray_folder == str(out / "gray-data") and "They are colour images (cifar10, 3 channels)" in markdown,
          f"[10] the gray study's images are not CIFAR-10's colour images: {gray_folder}")
    import matplotlib.image as mpimg  # noqa: E402
    samples = [mpimg.imread(p) for p in sorted(report.glob("kernels-sample_*_color.png"))]
    check(any(p.ndim == 3 and float(abs(p[..., 0] - p[..., 2]).max()) > 0.1 for p in samples),
          "[10] no colour sample shows colour (red and blue channels equal)")
else:
    check("is a gray data set" in markdown, "[10] the report does not say the gray study's data are gray")

# --- [11] Every overlay shows train accuracy beside test accuracy ---------------------------------------------------
for prefix, figure in (("Q2c", "q2c-curves.png"), ("Q1c", "q1c-curves.png"), ("Optimizers", "optimizers-curves.png")):
    series = section(prefix).get("series", {}).get(figure, {})
    check(series.get("accuracy") == ["test", "train"] and series.get("loss") == ["test", "train"],
          f"[11] {prefix}: {figure} draws {series or 'unknown series'}, expected train and test loss and accuracy")

# --- [12] The HTML page: every table captioned and spaced; words left-aligned -------------------------------------
html_tables = re.findall(r"<table>\n(<caption>[^<]*</caption>)?", page)
check(html_tables and all(html_tables), f"[12] {sum(1 for c in html_tables if not c)} of {len(html_tables)} HTML "
                                        "tables have no caption")
check(re.search(r"table\{[^}]*margin:[^}]*\}", page) is not None, "[12] HTML tables have no margin between them")
verdict_cells = re.findall(r"<td( class=\"text\")?>(?:too few epochs|overfits|no overfitting)", page)
check(verdict_cells and all(verdict_cells), "[12] verdict cells are not left-aligned (class text)")
check(re.search(r"td\.text[^{]*\{[^}]*text-align:left", page) is not None, "[12] no left alignment for text cells")

# Q1 in distributed.reproducible mode: one rank and two hold the same weights, the report says so from the
# digests, and the results files agree with it.
one_rank, two_ranks = out / "results" / "q1r_one_rank.h5", out / "results" / "q1r_two_ranks.h5"
check(one_rank.is_file() and two_ranks.is_file(), "[reproducible] the reproducible Q1 runs are missing")
if one_rank.is_file() and two_ranks.is_file():
    digests = [read_run(f).epochs["weights_digest"][-1] for f in (one_rank, two_ranks)]
    check(digests[0] == digests[1], f"[reproducible] one rank and two end with other weights: {digests}")
    check(f"is {digests[0][:16]}... on one rank and {digests[1][:16]}... on two, which agree: the two runs hold the "
          "same weights, bit for bit" in markdown, "[reproducible] the report does not state that the digests agree")
if failures:
    print("FAIL:\n  " + "\n  ".join(failures))
    sys.exit(1)
print(f"report complete: {len(contents['sections'])} sections, "
      f"{sum(len(s['tables']) for s in contents['sections'])} tables, "
      f"{sum(len(s['figures']) for s in contents['sections'])} figures")
