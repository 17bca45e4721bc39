# The predictions of `fusetrain plan --json` computed again from the profile and link files alone, with the
# model's formulas written out here (docs/planning.md): ring and recursive doubling by size, the hierarchical
# stages, PowerSGD's factors, the buckets in plan order behind backward.
"""Usage: plan_check.py PROFILE.json LINK.json PLAN.json   (exits 1 naming the first row that differs)"""
import json
import math
import sys


def ring(p, n, a, b):
    return 0.0 if p <= 1 else 2 * (p - 1) * a + 2 * (p - 1) / p * n * b


def doubling(p, n, a, b):
    return 0.0 if p <= 1 else math.ceil(math.log2(p)) * (a + n * b)


def level(p, n, lv, ring_min):
    """lv: (alpha, beta, small alpha); the ring from ring_min bytes (never when negative), doubling below."""
    if p <= 1:
        return 0.0
    alpha, beta, small_alpha = lv
    return ring(p, n, alpha, beta) if ring_min >= 0 and n >= ring_min else doubling(p, n, small_alpha, beta)


def allreduce(nodes, per, n, algorithm, link):
    intra, inter = link["intra"], link["inter"]
    if algorithm == "flat":
        return level(nodes * per, n, inter if nodes > 1 else intra, link["ring_min"])
    stage = 0.0 if per <= 1 else math.ceil(math.log2(per)) * intra[0] + n * intra[1]
    return 2 * stage + level(nodes, n, inter, link["ring_min"])


def powersgd(shapes, rank):
    first = second = 0
    for s in shapes:
        numel = math.prod(s)
        n = s[0]
        m = numel // n
        k = min(n, m, rank)
        if len(s) >= 2 and (n + m) * k * 2 < n * m:
            first, second = first + n * k, second + m * k
        else:
            first += numel
    return (sum(math.prod(s) for s in shapes), 0) if second == 0 else (first, second)


def bucket_time(bucket, row, link, element_bytes):
    algorithm, _, wire = row["allreduce"].partition("+")
    nodes, per = row["nodes"], row["ranks_per_node"]
    if wire.startswith("powersgd:"):
        first, second = powersgd(bucket["shapes"], int(wire.split(":")[1]))
        return sum(allreduce(nodes, per, e * element_bytes, algorithm, link) for e in (first, second) if e)
    size = 2 if wire in ("fp16", "bf16") else element_bytes
    return allreduce(nodes, per, bucket["elements"] * size, algorithm, link)


def main():
    profile, link_file, plan = (json.load(open(path)) for path in sys.argv[1:4])
    levels = link_file["levels"]
    link = {"ring_min": link_file["ring_min_bytes"]}
    for name in ("intra", "inter"):
        lv = levels.get(name)
        link[name] = (lv["alpha_s"], lv["beta_s_per_byte"], lv["small_alpha_s"]) if lv else None
    compute = sum(profile[k] for k in ("data_s", "forward_s", "backward_s", "optimizer_s"))
    for row in plan["rows"]:
        exposed = 0.0
        if row["devices"] > 1:
            end = 0.0
            for b in profile["buckets"]:
                end = max(end, b["ready_s"]) + bucket_time(b, row, link, profile["element_bytes"])
            exposed = max(0.0, end - profile["backward_s"])
        step = compute + exposed
        expected = {"step_s": step, "exposed_s": exposed, "efficiency": compute / step,
                    "images_per_s": profile["batch"] * row["devices"] / step}
        for key, value in expected.items():
            if not math.isclose(row[key], value, rel_tol=1e-9, abs_tol=1e-12):
                sys.exit(f"FAIL: {row['nodes']} x {row['ranks_per_node']} {row['allreduce']}: {key} {row[key]} "
                         f"against {value} computed here")
    print(f"plan_check: {len(plan['rows'])} rows agree with the model computed from the profile and link files")


if __name__ == "__main__":
    main()
