"""The progress line as people see it. `run OUT CMD...` runs CMD on a pseudo-terminal (as on a terminal) and
saves what it wrote; `plain LOG` checks output that went to a file; `terminal OUT` checks what a terminal
showed; `none LOG` checks that nothing of the progress line was written."""
import os
import re
import subprocess
import sys

PLAIN = re.compile(r"^progress: epoch (\d+)/(\d+) step (\d+)/(\d+) \((\d+)%\)  (\d+) img/s  loss (\d+\.\d{4})  "
                   r"ETA epoch (\d+s|\d+m\d\ds|\d+h\d\dm), run (\d+s|\d+m\d\ds|\d+h\d\dm)$")
# Lines scripts grep for, which the progress line must leave intact.
KEPT = re.compile(r"^(epoch +\d+/\d+  train loss |Rank \d+, Epoch \[|done: |results: |checkpoint after )")


def fail(message):
    print(f"FAIL: {message}", file=sys.stderr)
    sys.exit(1)


def run(out, command):
    """Runs `command` with its stdout and stderr on a new pseudo-terminal; writes its bytes to `out`."""
    master, slave = os.openpty()
    child = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=slave, stderr=slave)
    os.close(slave)
    data = bytearray()
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: every process holding the terminal has closed it
            break
        if not chunk:
            break
        data.extend(chunk)
    os.close(master)
    status = child.wait()
    open(out, "wb").write(bytes(data))
    if status != 0:
        sys.stdout.write(data.decode(errors="replace"))
        fail(f"{command} exited {status}")


def check_points(points, source):
    """Progress lines say sensible things: epochs and steps in range, in order, a finite loss, a throughput."""
    if len(points) < 2:
        fail(f"{source}: {len(points)} progress lines; at least 2 expected")
    previous = (0, 0)
    for epoch, epochs, step, steps, percent, images, loss, *_ in points:
        epoch, epochs, step, steps = int(epoch), int(epochs), int(step), int(steps)
        if not (1 <= epoch <= epochs and 1 <= step <= steps and int(percent) == 100 * step // steps):
            fail(f"{source}: progress at epoch {epoch}/{epochs}, step {step}/{steps} ({percent}%)")
        if (epoch, step) <= previous or int(images) <= 0 or not 0 < float(loss) < 10:
            fail(f"{source}: progress epoch {epoch} step {step} after {previous}, {images} img/s, loss {loss}")
        previous = (epoch, step)


def check_plain(log):
    """Output to a file: whole lines only, never a carriage return; the usual lines unchanged."""
    text = open(log, "rb").read().decode()
    if "\r" in text:
        fail(f"{log} holds a carriage return")
    lines = text.split("\n")
    progress = [line for line in lines if line.startswith("progress:")]
    bad = [line for line in progress if not PLAIN.match(line)]
    if bad:
        fail(f"{log}: progress lines not in the expected form: {bad[:3]}")
    check_points([PLAIN.match(line).groups() for line in progress], log)
    if sum(bool(re.match(r"^epoch +\d+/\d+  train loss ", line)) for line in lines) != 2:
        fail(f"{log}: the epoch lines are not 2 whole lines")
    print(f"{log}: {len(progress)} plain progress lines")


def shown(physical_line):
    """What a terminal shows of one line: a carriage return goes back to its start, later text overwrites."""
    cells, column = [], 0
    for ch in physical_line:
        if ch == "\r":
            column = 0
            continue
        cells[column:column + 1] = [ch]
        column += 1
    return "".join(cells).rstrip()


def check_terminal(out):
    """On a terminal: one line rewritten in place; before any other line it is erased (as many blanks as it
    had characters, then a carriage return), so every usual line reads as it does in a file."""
    text = open(out, "rb").read().decode().replace("\r\n", "\n")
    physical = text.split("\n")
    # An update shorter than the one before ends in blanks that cover the rest of it.
    updates = [u.rstrip(" ") for u in re.findall(r"\r(progress: [^\r\n]*)", text)]
    check_points([PLAIN.match(u).groups() if PLAIN.match(u) else fail(f"{out}: progress {u!r}") for u in updates], out)
    for line in physical:
        if "progress:" not in line:
            continue
        cleared = re.fullmatch(r"((?:\rprogress: [^\r]*)+)\r( +)\r(.*)", line)
        if not cleared:
            fail(f"{out}: a progress line not erased before the next line: {line!r}")
        last = cleared.group(1).split("\r")[-1].rstrip(" ")
        if len(cleared.group(2)) < len(last) or not KEPT.match(cleared.group(3)):
            fail(f"{out}: {len(cleared.group(2))} blanks erase {len(last)} characters before {cleared.group(3)!r}")
    screen = [shown(line) for line in physical]
    if any("progress:" in line for line in screen):
        fail(f"{out}: a progress line left on the screen: {[l for l in screen if 'progress:' in l][:2]}")
    if sum(bool(re.match(r"^epoch +\d+/\d+  train loss ", line)) for line in screen) != 2:
        fail(f"{out}: the screen does not show 2 epoch lines")
    print(f"{out}: {len(updates)} updates of one progress line, erased before every other line")


def check_none(log):
    text = open(log, "rb").read().decode()
    if "progress:" in text or "\r" in text.replace("\r\n", "\n"):
        fail(f"{log}: progress written with output.progress_every_s 0")
    print(f"{log}: no progress")


if __name__ == "__main__":
    command, path, *rest = sys.argv[1:]
    if command == "run":
        run(path, rest)
    else:
        {"plain": check_plain, "terminal": check_terminal, "none": check_none}[command](path)
