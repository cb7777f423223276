"""MkDocs hook: the benchmark plots under ``benchmarks/results`` join the site as ``results/...``, so pages show the
committed figures without a second copy of them in ``docs/``."""

from pathlib import Path

from mkdocs.structure.files import File

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"


def on_files(files, config):
    for image in sorted((BENCHMARKS / "results").rglob("*.png")):
        files.append(File(image.relative_to(BENCHMARKS).as_posix(), str(BENCHMARKS), config["site_dir"],
                          config["use_directory_urls"]))
    return files
