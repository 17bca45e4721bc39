#!/usr/bin/env python3
# Checks the packaging files against the build, where Spack and Apptainer cannot run: the dependency table names
# what CMake looks for, spack.yaml lists the table's specs, the Apptainer definition builds with the guide's commands.
"""usage: packaging_check.py SOURCE_DIR

1. tools/setup/dependencies.txt: every row that setup's probe reports (found-by `cmake`) is a name that
   cmake/FusetrainDependencies.cmake reports missing, and the other way round; every package the build finds
   (find_package, pkg_check_modules in any CMakeLists.txt or cmake/*.cmake) is found there too, or is LibTorch
   or CUDA (found by CMakeLists.txt itself), and has a row.
2. packaging/spack/spack.yaml: its specs are exactly the table's Spack specs of the rows whose need is build,
   tests, optional or gpu.
3. packaging/apptainer/fusetrain.def: the build steps of %post are the tools/setup.sh and cmake commands of
   docs/clusters.md's "Building on a cluster" block, in order.
Exit status 0 when all hold; 1, naming each difference, otherwise.
"""
import pathlib
import re
import sys

SPACK_NEEDS = {"build", "tests", "optional", "gpu"}
# Found by CMakeLists.txt itself, not by the probe: LibTorch comes from the venv or Torch_DIR, CUDA's toolkit
# only with nvcc (the GPU build).
FOUND_ELSEWHERE = {"Torch", "CUDAToolkit"}


def table(root):
    rows = []
    for line in (root / "tools/setup/dependencies.txt").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            name, need, found_by, debian, spack, module = line.split()
            rows.append({"name": name, "need": need, "found_by": found_by, "spack": spack})
    return rows


def cmake_files(root):
    files = [root / "CMakeLists.txt", *sorted((root / "cmake").glob("*.cmake"))]
    for folder in ("src", "data_prep", "kernels", "tests"):
        files += sorted((root / folder).rglob("CMakeLists.txt"))
    return files


def packages_found(text):
    """Names passed to find_package and the modules passed to pkg_check_modules."""
    names = set(re.findall(r"^\s*find_package\(\s*([\w.+-]+)", text, re.M))
    for args in re.findall(r"^\s*pkg_check_modules\(([^)]*)\)", text, re.M):
        names.update(a for a in args.split()[1:] if a not in {"REQUIRED", "QUIET", "IMPORTED_TARGET", "GLOBAL"})
    return names


def reported_missing(text):
    """Names cmake/FusetrainDependencies.cmake appends to FUSETRAIN_MISSING(_OPTIONAL)."""
    names = set(re.findall(r"^\s*ft_dependency\(\s*([\w.+-]+)", text, re.M))
    names.update(re.findall(r"list\(APPEND FUSETRAIN_MISSING(?:_OPTIONAL)? ([\w.+-]+)\)", text))
    return names


def check_table(root, rows, errors):
    deps_file = root / "cmake/FusetrainDependencies.cmake"
    deps_text = deps_file.read_text()
    probed = {r["name"] for r in rows if r["found_by"] == "cmake"}
    reported = reported_missing(deps_text)
    for name in sorted(probed - reported):
        errors.append(f"dependencies.txt: {name} is found by cmake, but FusetrainDependencies.cmake never reports it")
    for name in sorted(reported - probed):
        errors.append(f"FusetrainDependencies.cmake reports {name} missing, but dependencies.txt has no cmake row for it")
    names = {r["name"] for r in rows}
    in_deps = packages_found(deps_text)
    for path in cmake_files(root):
        for package in sorted(packages_found(path.read_text())):
            where = path.relative_to(root)
            if package not in names and package not in FOUND_ELSEWHERE:
                errors.append(f"{where}: finds {package}, which dependencies.txt has no row for")
            elif package not in in_deps and package not in FOUND_ELSEWHERE:
                errors.append(f"{where}: finds {package}, which FusetrainDependencies.cmake (setup's probe) does not")


def spack_specs(root):
    specs, in_specs = [], False
    for line in (root / "packaging/spack/spack.yaml").read_text().splitlines():
        if re.match(r"^\s*specs:\s*$", line):
            in_specs = True
        elif in_specs and re.match(r"^\s*-\s+\S", line):
            specs.append(line.split("-", 1)[1].strip())
        elif in_specs and line.strip() and not line.strip().startswith("#"):
            in_specs = False
    return specs


def check_spack(root, rows, errors):
    wanted = {r["spack"] for r in rows if r["need"] in SPACK_NEEDS and r["spack"] != "-"}
    listed = spack_specs(root)
    for spec in sorted(wanted - set(listed)):
        errors.append(f"spack.yaml: no spec {spec} (dependencies.txt's Spack spec)")
    for spec in sorted(set(listed) - wanted):
        errors.append(f"spack.yaml: spec {spec} is no Spack spec of dependencies.txt's build, tests, optional or gpu rows")


def guide_build_commands(root):
    text = (root / "docs/clusters.md").read_text()
    block = re.search(r"^## Building on a cluster\n.*?^```sh\n(.*?)^```", text, re.M | re.S)
    if not block:
        return []
    commands = [re.sub(r"\s+#\s*\[[\w ]+\]\s*$", "", line).strip() for line in block.group(1).splitlines()]
    return [c for c in commands if re.match(r"(tools/setup\.sh|cmake)\b", c)]


def definition_build_steps(root):
    text = (root / "packaging/apptainer/fusetrain.def").read_text()
    steps = re.search(r"# build: the commands of docs/clusters\.md.*?\n(.*?)\n\s*# end of build", text, re.S)
    return [line.strip() for line in steps.group(1).splitlines() if line.strip()] if steps else []


def check_apptainer(root, errors):
    guide, steps = guide_build_commands(root), definition_build_steps(root)
    if not guide:
        errors.append("docs/clusters.md: no sh block of setup and cmake commands under '## Building on a cluster'")
    if steps != guide:
        errors.append("fusetrain.def's build steps differ from docs/clusters.md's:\n  def:  "
                      + "\n        ".join(steps) + "\n  docs: " + "\n        ".join(guide))


def main():
    root = pathlib.Path(sys.argv[1])
    errors = []
    rows = table(root)
    check_table(root, rows, errors)
    check_spack(root, rows, errors)
    check_apptainer(root, errors)
    print("\n".join(f"FAIL: {error}" for error in errors) if errors else
          f"ok: {len(rows)} dependencies, {len(spack_specs(root))} Spack specs, "
          f"{len(guide_build_commands(root))} build commands")
    return int(bool(errors))


if __name__ == "__main__":
    sys.exit(main())
