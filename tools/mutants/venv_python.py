# The mutant tools' interpreter: universalmutator lives in the project's virtual environment (tools/setup.sh),
# so a tool started by another Python runs itself again under the environment's one.
import os
import pathlib
import sys

VENV_PYTHON = pathlib.Path(os.environ.get("FUSETRAIN_CACHE", pathlib.Path.home() / ".cache" / "fusetrain")) / "venv/bin/python"


def require_universalmutator(script: str) -> None:
    """Returns when universalmutator imports; else runs `script` again under the environment's Python, or exits
    saying how to install it."""
    try:
        import universalmutator.mutator  # noqa: F401
        return
    except ImportError:
        pass
    if VENV_PYTHON.exists() and pathlib.Path(sys.prefix).resolve() != VENV_PYTHON.parent.parent.resolve():
        os.execv(str(VENV_PYTHON), [str(VENV_PYTHON), script, *sys.argv[1:]])
    raise SystemExit("universalmutator is missing: run tools/setup.sh (make setup), which installs it in "
                     f"{VENV_PYTHON.parent.parent}")
