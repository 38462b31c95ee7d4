"""Starter kits: ``koikoi-referee new-bot LANG DIR`` writes a small runnable bot folder in one of the languages.

Each kit is a folder of templates beside this module (``python``, ``javascript``, ``java``, ``rust``, ``cpp``,
``go``): a ``bot.toml`` (with its build step where the language compiles), the bot's source with typed messages,
the request loop and stderr logging, and a README. ``{{NAME}}`` in a template becomes the bot's name.
"""

from __future__ import annotations

import re
from importlib import resources
from pathlib import Path

from referee.errors import UsageError

LANGUAGES = ("python", "javascript", "java", "rust", "cpp", "go")
"""The kits, by the name ``new-bot`` takes."""
ALIASES = {"py": "python", "js": "javascript", "node": "javascript", "c++": "cpp", "golang": "go"}
"""Other names of the kits."""
_NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.+-]{0,31}")
_RENAME = {"gitignore": ".gitignore"}


class KitError(UsageError):
    """An unknown language, a bad name, or a folder that cannot be written."""


def write_kit(lang: str, folder: Path, name: str | None = None) -> list[Path]:
    """Write the kit of ``lang`` into ``folder`` (new, or empty) for a bot called ``name`` (default: the
    folder's name); the files written."""
    kit = ALIASES.get(lang.lower(), lang.lower())
    if kit not in LANGUAGES:
        raise KitError(f"no starter kit for {lang!r}; choose one of {', '.join(LANGUAGES)}")
    name = name or folder.resolve().name
    if not _NAME_RE.fullmatch(name):
        raise KitError(f"bot name {name!r}: use 1 to 32 letters, digits or _.+- (start alphanumeric); see --name")
    if folder.exists() and (not folder.is_dir() or any(folder.iterdir())):
        raise KitError(f"{folder}: exists and is not an empty folder")
    root = resources.files(__name__).joinpath(kit)
    written: list[Path] = []
    try:
        for source, rel in _walk(root, ""):
            target = folder / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(source.replace("{{NAME}}", name), encoding="utf-8")
            written.append(target)
    except OSError as exc:
        raise KitError(f"{folder}: cannot write: {exc.strerror or exc}") from None
    return written


def _walk(node: resources.abc.Traversable, rel: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for child in sorted(node.iterdir(), key=lambda c: c.name):
        if child.name.startswith("__") or child.name.endswith(".pyc"):
            continue
        path = f"{rel}{_RENAME.get(child.name, child.name)}"
        if child.is_dir():
            out += _walk(child, path + "/")
        else:
            out.append((child.read_text(encoding="utf-8"), path))
    return out
