#!/usr/bin/env python3
"""Build the krew release archive ``dist/kubectl-safety-<version>.tar.gz`` and fill krew/safety.yaml.

The archive runs with nothing but a Python 3 interpreter: it holds the ``kubectl_safety`` package,
its pure-Python dependencies in ``vendor/``, two launchers (``kubectl-safety``,
``kubectl_complete-safety``) and the shell completion scripts. click, tabulate and PyYAML (without
its optional C extension) are copied from this interpreter's installation; the kubernetes client
and its runtime dependencies come from pinned pure-Python (``*-none-any``) wheels downloaded from
the package index with ``pip download`` into a cache (``~/.cache/kubectl-safety/wheels``; only
the first build needs the index) and checked against their sha256. kubernetes
36.0.3 is the newest release of the synchronous client that needs nothing compiled (37 needs
pydantic-core); its aiohttp requirement serves only ``kubernetes.aio``, which is left out.

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
import subprocess
import sys
import tarfile
import tempfile
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from kubectl_safety import __version__  # noqa: E402

VENDORED = {"click": "8.5.1", "tabulate": "0.10.0", "PyYAML": "6.0.3"}  # copied from this interpreter: the versions
# the tests run (tests/unit/project/test_packaging.py checks the installed ones match); the build refuses others
OPTIONAL_EXTENSIONS = {"PyYAML": ("yaml/_yaml.",)}  # yaml falls back to pure Python without it
WHEELS = {  # the kubernetes client's runtime closure: distribution: (version, sha256 of its none-any wheel)
    "kubernetes": ("36.0.3", "8fde9241c4b298e6374a069dcf728359b4e72c2fb29489a975ba4e1c047cf10f"),
    "certifi": ("2026.5.20", "3c52e209ba0a4ad7aebe60436a4ab349c39e1e602e8c134221e546902ad25897"),
    "charset-normalizer": ("3.4.7", "3dce51d0f5e7951f8bb4900c257dad282f49190fdbebecd4ba99bcc41fef404d"),
    "durationpy": ("0.11", "a739fe2b8972c250ff72f8e2c488d18cf25f7b852f49ee76048775d5171df30c"),
    "idna": ("3.13", "892ea0cde124a99ce773decba204c5552b69c3c67ffd5f232eb7696135bc8bb3"),
    "oauthlib": ("4.0.1", "498a298876e996301950a5b053d12c31628bb7b895db03666430c69ce182eb61"),
    "python-dateutil": ("2.9.0.post0", "a8b2bc7bffae282281c8140a97d3aa9c14da0b136dfe83f850eea9a5f7470427"),
    "requests": ("2.34.2", "2a0d60c172f83ac6ab31e4554906c0f3b3588d37b5cb939b1c061f4907e278e0"),
    "requests-oauthlib": ("2.0.0", "7dd8a5c40426b779b0868c404bdef9768deccf22749cde15852df527e6269b36"),
    "six": ("1.17.0", "4721f391ed90541fddacab5acf947aa0d3dc7d27b2e1e8eda2be8970586c3274"),
    "urllib3": ("2.8.0", "0cf3cae568d36aa9576b28dfb35f11328f1cb974ca7647d9475ebb86c75ac6e3"),
    "websocket-client": ("1.9.2", "e1a673830a9c7bfa47b1cd3d5e4178f4c9651d80a4eab02c9c23a1c3ec6250ce"),
}
WHEEL_SKIP = ("kubernetes/aio/",)  # the asyncio client (needs aiohttp); unused by kubectl-safety
WHEEL_CACHE = os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"),
                           "kubectl-safety", "wheels")
SKIP_METADATA = {"RECORD", "INSTALLER", "REQUESTED", "direct_url.json", "entry_points.txt"}
EXTRA_FILES = ("README.md", "LICENSE")
URI_BASE = "https://github.com/kubectl-safety/kubectl-safety/releases/download"

LAUNCHER = '''#!/usr/bin/env python3
"""{name} from the kubectl-safety release archive (vendored pure-Python dependencies).

Run under the name kubectl_complete-safety (e.g. a symlink to krew's bin/kubectl-safety, which
survives krew upgrade) it answers kubectl's completion requests.
"""
import os
import sys

COMPLETE = os.path.basename(sys.argv[0]).startswith("kubectl_complete-")
if sys.version_info < {minimum!r}:
    if COMPLETE:
        sys.exit(print(":4"))
    {too_old}
HERE = os.path.dirname(os.path.realpath(__file__))
sys.path[:0] = [HERE, os.path.join(HERE, "vendor")]

if COMPLETE:
    from kubectl_safety.cli.completion import main  # noqa: E402
else:
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
    for path in wheels():
        with zipfile.ZipFile(path) as whl:
            meta = next(n for n in whl.namelist() if n.endswith(".dist-info/METADATA"))
            specs += re.findall(r"(?m)^Requires-Python: (.+)$", whl.read(meta).decode())
    bounds = [tuple(int(x) for x in m) for s in specs for m in re.findall(r">=\s*(\d+)\.(\d+)", s)]
    return max(bounds, default=(3, 8))


def vendor(dist_name: str, dest: str):
    """Copy an installed distribution's modules and metadata (licences) into ``dest``; pure Python only."""
    dist = importlib.metadata.distribution(dist_name)
    if dist.version != VENDORED[dist_name]:
        raise SystemExit(f"{dist_name} {dist.version} is installed; the archive vendors the tested "
                         f"{VENDORED[dist_name]} (pip install {dist_name}=={VENDORED[dist_name]})")
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


def wheels() -> list:
    """Paths of the pinned wheels in the cache, downloaded when missing; each checked against its sha256."""
    paths = []
    for name, (version, digest) in WHEELS.items():
        stem = f"{re.sub(r'[-.]+', '_', name)}-{version}-"
        found = [f for f in sorted(os.listdir(WHEEL_CACHE)) if f.lower().startswith(stem)] \
            if os.path.isdir(WHEEL_CACHE) else []
        if not found:
            subprocess.run([sys.executable, "-m", "pip", "download", "--only-binary=:all:", "--no-deps",
                            "--platform", "any", "--implementation", "py", "--no-cache-dir", "-q",
                            "-d", WHEEL_CACHE, f"{name}=={version}"], check=True)
            found = [f for f in sorted(os.listdir(WHEEL_CACHE)) if f.lower().startswith(stem)]
        if len(found) != 1 or not found[0].endswith("-none-any.whl"):
            raise SystemExit(f"{name} {version}: expected one pure-Python wheel in {WHEEL_CACHE}, found {found}")
        path = os.path.join(WHEEL_CACHE, found[0])
        if sha256(path) != digest:
            raise SystemExit(f"{path}: sha256 {sha256(path)} is not the pinned {digest}")
        paths.append(path)
    return paths


def unpack_wheel(path: str, dest: str):
    """Extract a wheel's modules and metadata (licences) into ``dest``, without tests or compiled files."""
    with zipfile.ZipFile(path) as whl:
        for rel in sorted(whl.namelist()):
            if rel.endswith("/") or rel.startswith(WHEEL_SKIP) or rel.endswith("_test.py"):
                continue
            if rel.split("/")[0].endswith(".dist-info") and os.path.basename(rel) in SKIP_METADATA:
                continue
            if rel.endswith((".so", ".pyd", ".dylib")):
                raise SystemExit(f"{path}: {rel} is compiled; the archive must stay pure Python")
            target = os.path.join(dest, rel)
            os.makedirs(os.path.dirname(target), exist_ok=True)
            with open(target, "wb") as f:
                f.write(whl.read(rel))


def stage(top: str, minimum: tuple):
    """Lay out the archive's files under ``top``."""
    shutil.copytree(os.path.join(ROOT, "kubectl_safety"), os.path.join(top, "kubectl_safety"),
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    shutil.copytree(os.path.join(ROOT, "completions"), os.path.join(top, "completions"))
    for dist in VENDORED:
        vendor(dist, os.path.join(top, "vendor"))
    for path in wheels():
        unpack_wheel(path, os.path.join(top, "vendor"))
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
        (r"(?m)^(    sha256: )\S+$", rf'\g<1>"{digest}"'),  # quoted: a digest of digits must stay a string
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
