#!/usr/bin/env python3
"""Build the krew release archive ``dist/kubectl-safety-<version>.tar.gz`` and fill krew/safety.yaml.

The archive runs with nothing but a Python 3 interpreter: it holds the ``kubectl_safety`` package,
its pure-Python dependencies (click, tabulate, PyYAML without its optional C extension) copied
from this interpreter's installation into ``vendor/``, two launchers (``kubectl-safety``,
``kubectl_complete-safety``) and the shell completion scripts. The live-cluster path also needs
the ``kubernetes`` client, which is not vendored (its current releases need compiled pydantic-core):
users install it into their python3 (see README.md). Everything offline (``--snapshot``),
``--help``, ``--version`` and completion works without it.

The archive is reproducible (sorted entries, fixed times and owners), so its sha256 depends only
on the files. The manifest's version, uri, sha256, archive folder and minimum Python are rewritten.

Usage: python scripts/build_krew_archive.py [--out DIR] [--manifest PATH] [--uri-base URL]
"""

import argparse
import gzip
import hashlib
import importlib.metadata
import io
import os
import re
import shutil
import sys
import tarfile
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from kubectl_safety import __version__  # noqa: E402

VENDORED = ("click", "tabulate", "PyYAML")
OPTIONAL_EXTENSIONS = {"PyYAML": ("yaml/_yaml.",)}  # yaml falls back to pure Python without it
SKIP_METADATA = {"RECORD", "INSTALLER", "REQUESTED", "direct_url.json", "entry_points.txt"}
EXTRA_FILES = ("README.md", "LICENSE")
URI_BASE = "https://github.com/kubectl-safety/kubectl-safety/releases/download"

LAUNCHER = '''#!/usr/bin/env python3
"""{name} from the kubectl-safety release archive (vendored pure-Python dependencies)."""
import os
import sys

if sys.version_info < {minimum!r}:
    {too_old}
HERE = os.path.dirname(os.path.realpath(__file__))
sys.path[:0] = [HERE, os.path.join(HERE, "vendor")]

from {module} import main  # noqa: E402

sys.exit(main())
'''
LAUNCHERS = {  # name: (module with main, what to do on a too old Python)
    "kubectl-safety": ("kubectl_safety.cli.main",
                       'sys.exit("kubectl-safety needs Python >= {minimum_text} (python3 is %s)"'
                       ' % sys.version.split()[0])'),
    "kubectl_complete-safety": ("kubectl_safety.cli.completion", 'sys.exit(print(":4"))'),  # completion: silent
}


def minimum_python() -> tuple:
    """The highest ``>=X.Y`` among the project's and the vendored distributions' Requires-Python."""
    specs = [re.search(r"python_requires\s*=\s*(.+)", open(os.path.join(ROOT, "setup.cfg")).read()).group(1)]
    specs += [importlib.metadata.metadata(d).get("Requires-Python") or "" for d in VENDORED]
    bounds = [tuple(int(x) for x in m) for s in specs for m in re.findall(r">=\s*(\d+)\.(\d+)", s)]
    return max(bounds, default=(3, 8))


def vendor(dist_name: str, dest: str):
    """Copy an installed distribution's modules and metadata (licences) into ``dest``; pure Python only."""
    dist = importlib.metadata.distribution(dist_name)
    for f in dist.files or ():
        rel = str(f)
        if rel.startswith("..") or "__pycache__" in rel or rel.endswith(".pyc"):
            continue
        if rel.split("/")[0].endswith(".dist-info") and os.path.basename(rel) in SKIP_METADATA:
            continue
        if rel.endswith((".so", ".pyd", ".dylib")):
            if rel.startswith(OPTIONAL_EXTENSIONS.get(dist_name, ())):
                continue
            raise SystemExit(f"{dist_name}: {rel} is compiled; the archive must stay pure Python")
        target = os.path.join(dest, rel)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        shutil.copyfile(f.locate(), target)


def stage(top: str, minimum: tuple):
    """Lay out the archive's files under ``top``."""
    shutil.copytree(os.path.join(ROOT, "kubectl_safety"), os.path.join(top, "kubectl_safety"),
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    shutil.copytree(os.path.join(ROOT, "completions"), os.path.join(top, "completions"))
    for dist in VENDORED:
        vendor(dist, os.path.join(top, "vendor"))
    for rel in EXTRA_FILES:
        if os.path.exists(os.path.join(ROOT, rel)):
            os.makedirs(os.path.dirname(os.path.join(top, rel)), exist_ok=True)
            shutil.copyfile(os.path.join(ROOT, rel), os.path.join(top, rel))
    minimum_text = ".".join(map(str, minimum))
    for name, (module, too_old) in LAUNCHERS.items():
        with open(os.path.join(top, name), "w", encoding="utf-8") as f:
            f.write(LAUNCHER.format(name=name, module=module, minimum=minimum,
                                    too_old=too_old.format(minimum_text=minimum_text)))


def write_tar(src: str, archive: str):
    """A gzipped tar of ``src`` (its folder name kept) with sorted entries, mtime 0 and root owner."""
    base = os.path.dirname(src)
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for dirpath, dirnames, filenames in os.walk(src):
            dirnames.sort()
            for name in [""] + sorted(filenames):
                path = os.path.join(dirpath, name) if name else dirpath
                info = tar.gettarinfo(path, os.path.relpath(path, base))
                info.mtime, info.uid, info.gid, info.uname, info.gname = 0, 0, 0, "", ""
                executable = info.isdir() or os.path.basename(path) in LAUNCHERS
                info.mode = 0o755 if executable else 0o644
                if info.isdir():
                    tar.addfile(info)
                else:
                    with open(path, "rb") as f:
                        tar.addfile(info, f)
    with open(archive, "wb") as out, gzip.GzipFile(filename="", mode="wb", fileobj=out, mtime=0) as gz:
        gz.write(buffer.getvalue())


def sha256(path: str) -> str:
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def fill_manifest(path: str, *, folder: str, uri: str, digest: str, minimum: tuple):
    """Rewrite the release-specific fields of the krew manifest in place (each occurs once)."""
    text = open(path, encoding="utf-8").read()
    replacements = [
        (r"(?m)^(  version: )v\S+$", rf"\g<1>v{__version__}"),
        (r"(?m)^(    uri: )\S+$", rf"\g<1>{uri}"),
        (r"(?m)^(    sha256: )\S+$", rf"\g<1>{digest}"),
        (r"(?m)^(    - from: )\S+/\*$", rf"\g<1>{folder}/*"),
        (r"Python >= \d+\.\d+", "Python >= " + ".".join(map(str, minimum))),
    ]
    for pattern, value in replacements:
        text, count = re.subn(pattern, value, text)
        if count != 1:
            raise SystemExit(f"{path}: expected exactly one match of {pattern!r}, found {count}")
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def build(out_dir: str, manifest: str, uri_base: str) -> str:
    """Build the archive into ``out_dir``, fill ``manifest``; return the archive path."""
    folder = f"kubectl-safety-{__version__}"
    archive = os.path.join(out_dir, f"{folder}.tar.gz")
    minimum = minimum_python()
    os.makedirs(out_dir, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        stage(os.path.join(tmp, folder), minimum)
        write_tar(os.path.join(tmp, folder), archive)
    fill_manifest(manifest, folder=folder, uri=f"{uri_base}/v{__version__}/{folder}.tar.gz",
                  digest=sha256(archive), minimum=minimum)
    return archive


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=os.path.join(ROOT, "dist"), help="output folder (default: dist/)")
    parser.add_argument("--manifest", default=os.path.join(ROOT, "krew", "safety.yaml"),
                        help="krew manifest to fill (default: krew/safety.yaml)")
    parser.add_argument("--uri-base", default=URI_BASE, help="release download URL prefix")
    args = parser.parse_args(argv)
    archive = build(args.out, args.manifest, args.uri_base.rstrip("/"))
    print(f"{archive} sha256 {sha256(archive)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
